import type { Clock } from '@platform/kit/clock';
import { uuidv7 } from '@platform/kit/ids';
import type { Logger } from 'pino';
import type { BudgetRepository } from './budget.repository.ts';

/**
 * This instance as a budget lease holder: its id, its heartbeat, and whether its leases may be counted on now.
 *
 * The database ends a holder one TTL after its last renewal (`expires_at`), and expiry is final. The instance counts
 * on its leases only while its last renewal was *sent* less than five sixths of the TTL ago: the database started
 * that TTL later than the sending, so the instance always stops before anyone may reclaim its leases. Renewals run
 * every third of the TTL (the housekeeping), so a live instance never gets near that.
 */
export class LeaseHolder {
  readonly #repository: BudgetRepository;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #ttlMs: number;
  readonly #onLapse: () => void;
  #id = uuidv7();
  #registered = false;
  #validUntil = 0;
  #renewing: Promise<void> | undefined;

  constructor(args: { repository: BudgetRepository; clock: Clock; logger: Logger; ttlMs: number; onLapse: () => void }) {
    this.#repository = args.repository;
    this.#clock = args.clock;
    this.#logger = args.logger;
    this.#ttlMs = args.ttlMs;
    this.#onLapse = args.onLapse;
  }

  /** The current id; a lapse makes a new one, so leases granted to the old one never count again. */
  get id(): string {
    return this.#id;
  }

  /** Registered since start or since the last lapse (a quiet instance never registers and costs the database nothing). */
  get registered(): boolean {
    return this.#registered;
  }

  /** Whether leases may be counted on right now. */
  valid(): boolean {
    return this.#clock.now().getTime() < this.#validUntil;
  }

  /** Registers or renews; one renewal at a time. Resolves once done, or once the lapse it found is handled. */
  renew(): Promise<void> {
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  /**
   * The heartbeat lapsed (the process stalled, or the database was out of reach, for a whole TTL): its leases are
   * reclaimable, so none of them counts any more. A new id registers on the next reservation.
   */
  lapse(): void {
    this.#logger.warn({ holder: this.#id }, 'budget lease holder lapsed: its slices are dropped and a new holder registers');
    this.#id = uuidv7();
    this.#registered = false;
    this.#validUntil = 0;
    this.#onLapse();
  }

  /** Ends the holder at shutdown: every lease it still holds goes back at once. */
  async retire(): Promise<void> {
    if (!this.#registered) return;
    this.#registered = false;
    this.#validUntil = 0;
    await this.#repository.retire(this.#id);
  }

  async #renewOnce(): Promise<void> {
    const sentAt = this.#clock.now().getTime();
    const alive = await this.#repository.heartbeat(this.#id, !this.#registered, this.#ttlMs);
    if (!alive) {
      this.lapse();
      return;
    }
    this.#registered = true;
    this.#validUntil = sentAt + (this.#ttlMs * 5) / 6;
  }
}

/**
 * Calls waiting for slices recalled from other instances, by actor-day: woken by the announcement that they are
 * back, or after `waitMs` of wall time. That bound is on another process's answer, like a network timeout, so it
 * is not the injected clock: leases and days are business time; this only decides when to stop waiting for a NOTIFY.
 */
export class RecallWaits {
  readonly #waitMs: number;
  readonly #waiters = new Map<string, Array<() => void>>();

  constructor(waitMs: number) {
    this.#waitMs = waitMs;
  }

  wait(key: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const left = (this.#waiters.get(key) ?? []).filter((other) => other !== wake);
        if (left.length > 0) this.#waiters.set(key, left);
        else this.#waiters.delete(key);
        resolve();
      }, this.#waitMs);
      timer.unref();
      this.#waiters.set(key, [...(this.#waiters.get(key) ?? []), wake]);
    });
  }

  wake(key: string): void {
    for (const wake of this.#waiters.get(key) ?? []) wake();
    this.#waiters.delete(key);
  }
}
