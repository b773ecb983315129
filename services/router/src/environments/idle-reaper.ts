import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { EnvironmentProvider, EnvironmentUser } from './provider.ts';

/** Requests (and open streams) per user, and when each user was last seen: what says an environment is idle. */
export class Activity {
  readonly #clock: Clock;
  readonly #inFlight = new Map<string, number>();
  readonly #lastSeen = new Map<string, number>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  begin(userId: string): void {
    this.#inFlight.set(userId, (this.#inFlight.get(userId) ?? 0) + 1);
    this.#lastSeen.set(userId, this.#clock.now().getTime());
  }

  end(userId: string): void {
    const left = (this.#inFlight.get(userId) ?? 1) - 1;
    if (left <= 0) this.#inFlight.delete(userId);
    else this.#inFlight.set(userId, left);
    this.#lastSeen.set(userId, this.#clock.now().getTime());
  }

  inFlight(userId: string): number {
    return this.#inFlight.get(userId) ?? 0;
  }

  /** Ms since the user's last request began or ended, at `now`; Infinity when never seen (an adopted daemon). */
  idleFor(userId: string, now = this.#clock.now().getTime()): number {
    const last = this.#lastSeen.get(userId);
    return last === undefined ? Number.POSITIVE_INFINITY : now - last;
  }

  forget(userId: string): void {
    this.#lastSeen.delete(userId);
  }
}

/**
 * Stops environments nobody has used for `idleTimeoutMs`: no request in flight (an open event stream counts), none
 * begun or ended since, and the environment itself not working (its daemon's `/healthz` says `working`). The next request starts the environment again. Runs every quarter of the timeout (at most a
 * minute) on the injected clock; `reap()` is one round, for tests.
 */
export class IdleReaper {
  readonly #provider: EnvironmentProvider;
  readonly #activity: Activity;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #idleTimeoutMs: number;
  readonly #lookup: (userId: string) => Promise<EnvironmentUser | undefined>;
  readonly #working: (user: EnvironmentUser) => Promise<boolean>;
  readonly #stopping = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(options: {
    provider: EnvironmentProvider;
    activity: Activity;
    clock: Clock;
    logger: Logger;
    idleTimeoutMs: number;
    lookup: (userId: string) => Promise<EnvironmentUser | undefined>;
    /** Whether the environment is busy on its own (a background walk, a wake's turn): then it is not idle. */
    working?: (user: EnvironmentUser) => Promise<boolean>;
  }) {
    this.#provider = options.provider;
    this.#activity = options.activity;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#lookup = options.lookup;
    this.#working = options.working ?? (async () => false);
  }

  start(): void {
    this.#loop ??= (async () => {
      const interval = Math.min(this.#idleTimeoutMs / 4, 60_000);
      while (!this.#stopping.signal.aborted) {
        await this.#clock.sleep(interval, this.#stopping.signal);
        if (this.#stopping.signal.aborted) return;
        await this.reap().catch((error) => this.#logger.warn({ err: error }, 'idle reaping failed'));
      }
    })();
  }

  /** Stops every environment idle at `now` (the clock's time; a test passes a later one); resolves with the users stopped. */
  async reap(now = this.#clock.now().getTime()): Promise<string[]> {
    const stopped: string[] = [];
    const idle = (userId: string) => this.#activity.inFlight(userId) === 0 && this.#activity.idleFor(userId, now) >= this.#idleTimeoutMs;
    for (const userId of this.#provider.running()) {
      if (!idle(userId)) continue;
      const user = await this.#lookup(userId);
      if (user === undefined) continue;
      // No request for a while, but the daemon may be at work nobody waits on (an async intent, a wake's turn).
      if (await this.#working(user)) continue;
      // Asked again after the lookup and the probe: a request (a wake, a scheduler's check) that came in while they
      // were out would otherwise be handed to a daemon being stopped, and wait on it until its caller gave up.
      if (!idle(userId)) continue;
      await this.#provider.stop(user);
      this.#activity.forget(userId);
      stopped.push(userId);
      this.#logger.info({ user: userId }, 'idle environment stopped');
    }
    return stopped;
  }

  async stop(): Promise<void> {
    this.#stopping.abort('stopping');
    await this.#loop;
  }
}
