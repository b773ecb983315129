import { type RawBuilder, sql } from 'kysely';

/**
 * Time, injected everywhere it matters so tests never sleep. Production uses `systemClock`;
 * tests use `ManualClock` from the testkit.
 */
export interface Clock {
  /** This instance's wall time: for stateless checks such as token expiry. */
  now(): Date;
  /**
   * The time SQL compares against for anything several instances must agree on (due-ness, nonce expiry):
   * the database's `now()` in production, so skewed instance clocks cannot disagree.
   */
  sqlNow(): RawBuilder<Date>;
  /** Resolves after `ms` of this clock's time, or early when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sqlNow: () => sql<Date>`now()`,
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** Unix seconds of a date. */
export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
