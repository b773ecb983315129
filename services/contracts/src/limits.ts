/** The engine's fixed limits; the README's Limits section lists the same numbers. */
export const limits = {
  /** A project of a few hundred files fits; solc would take minutes on anything near this size anyway. */
  bodyBytes: 4 * 1024 * 1024,
  sourceFiles: 256,
  sourcePathChars: 200,
  targets: 64,
  projectIdChars: 64,
  contractNameChars: 256,
  idempotencyKeyChars: 128,
  chainIdChars: 64,
  chainNameChars: 128,
  urlChars: 2048,
  hexDataChars: 1024 * 1024,
  abiEntries: 2048,
  args: 64,
  patternChars: 256,
  traceLines: 200,
  logLines: 200,
  pageSize: { default: 50, max: 200 },
} as const;
