/** The connector service's limits; the README lists the same values. */
export const connectorLimits = {
  bodyBytes: 64 * 1024,
  resealBatchDefault: 100,
  resealBatchMax: 10_000,
  resealIntervalDefault: '5m',
  providerTimeoutDefault: '10s',
  /** Sockets kept open to the provider; a tool call holds at most a search's worth (1 + 50) at once. */
  providerSockets: 64,
  /** The largest provider answer read (a full message with its HTML part, a page of events). */
  providerAnswerBytes: 4 * 1024 * 1024,
} as const;
