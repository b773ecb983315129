/** The marketplace's size limits; each has a test at and past its edge. */
export const limits = {
  /** Request bodies (a manifest with its JSON schemas is the largest). */
  bodyBytes: 256 * 1024,
  /** Pages: `?limit=` 1–100, default 20. */
  pageMax: 100,
  pageDefault: 20,
} as const;
