import type { Clock } from '@platform/kit/clock';
import { type RawBuilder, sql } from 'kysely';

interface Sleeper {
  wakeAt: number;
  resolve: () => void;
}

/**
 * A clock that only moves when the test moves it. SQL sees the same time (`sqlNow()` is a parameter),
 * and sleepers wake when `advance` passes their deadline, so time-dependent code runs without real waiting.
 *
 * @example const clock = new ManualClock('2026-03-08T06:00:00Z'); clock.advance(60_000)
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(start: string | Date = '2026-01-01T00:00:00Z') {
    this.#now = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#now);
  }
  /**
   * The manual time with microseconds, as PostgreSQL's `now()` has them (half a millisecond past the manual time):
   * a value written from it and read back as a JavaScript date has lost them, so code that finds a row again by
   * equality on such a time fails here as it fails in production (the connector's refresh claims did), on PGlite too.
   */
  sqlNow(): RawBuilder<Date> {
    return sql<Date>`${`${new Date(this.#now).toISOString().slice(0, -1)}500Z`}::timestamptz`;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const sleeper: Sleeper = { wakeAt: this.#now + Math.max(0, ms), resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener('abort', () => this.#wake(sleeper), { once: true });
    });
  }
  /** Moves time forward and wakes every sleeper whose deadline has passed. */
  advance(ms: number): void {
    this.set(new Date(this.#now + ms));
  }
  set(time: string | Date): void {
    this.#now = new Date(time).getTime();
    for (const sleeper of [...this.#sleepers]) if (sleeper.wakeAt <= this.#now) this.#wake(sleeper);
  }
  #wake(sleeper: Sleeper): void {
    this.#sleepers = this.#sleepers.filter((other) => other !== sleeper);
    sleeper.resolve();
  }
}
