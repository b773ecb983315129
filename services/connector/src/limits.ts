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
  /** How long a begun connect flow may be finished: long enough to sign in, short enough that a leaked link dies. */
  stateTtlDefault: '10m',
  stateTtlMinMs: 60_000,
  stateTtlMaxMs: 3_600_000,
  /** Refresh access tokens expiring within this, before a tool runs. */
  refreshMarginDefault: '2m',
  refreshMarginMaxMs: 30 * 60_000,
  /** Beyond the provider timeout, how long a refresh claim outlives a call before another instance may take it. */
  refreshLeaseSlackMs: 5_000,
  /** How often an instance waiting for another's refresh reads the row again. */
  refreshPollMs: 250,
  /** Connect flows one owner may have begun and not finished at once: enough for retries, not a flood of rows. */
  pendingConnectsPerOwner: 10,
  /** How often abandoned connect flows are deleted. */
  statePurgeIntervalMs: 5 * 60_000,
} as const;
