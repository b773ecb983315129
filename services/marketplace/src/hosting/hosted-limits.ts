/** Hosted mode's limits; each has a test at and past its edge (test/hosted-upload.test.ts). */
export const hostedLimits = {
  /** A whole upload (Workers for Platforms takes 10 MB for a paid account's script). */
  uploadBytes: 10 * 1024 * 1024,
  /** One module. */
  moduleBytes: 4 * 1024 * 1024,
  /** The metadata part. */
  metadataBytes: 64 * 1024,
  /** Parts in all, the metadata included. */
  parts: 65,
  /** A module's name: relative path segments of `A-Z a-z 0-9 . _ -`, ending .js, .mjs or .wasm. */
  moduleNameLength: 128,
  bindings: 64,
  bindingTextBytes: 5 * 1024,
  egressHosts: 32,
  /** Log lines kept per listing; older ones go as new ones come. */
  logLinesPerListing: 10_000,
  /** One log line (longer ones are cut, saying so). */
  logLineChars: 4096,
  /** Log lines one call may leave (more are dropped, saying how many). */
  logLinesPerCall: 256,
} as const;
