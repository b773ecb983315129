/** The scheduler's limits; the README's limits table lists the same values and a test checks each edge. */
export const alarmLimits = {
  bodyBytes: 64 * 1024,
  wakeMessageChars: 16_384,
  labelChars: 200,
  conversationIdChars: 200,
  idempotencyKeyChars: 200,
  cronExprChars: 200,
  timezoneChars: 64,
  payloadBytes: 16 * 1024,
  defaultMaxFailures: 5,
  maxFailures: 100,
  /** 10 years: the furthest an alarm may be set. */
  horizonSeconds: 315_360_000,
  listDefault: 100,
  listMax: 500,
} as const;
