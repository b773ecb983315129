/** The connector service's limits; the README lists the same values. */
export const connectorLimits = {
  bodyBytes: 64 * 1024,
  resealBatchDefault: 100,
  resealBatchMax: 10_000,
  resealIntervalDefault: '5m',
} as const;
