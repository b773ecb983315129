import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { inSpan } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import type { WakeMetrics } from '../metrics.ts';
import { byDeadline, late } from './deadline.ts';
import { KeyedFlights } from './keyed-flights.ts';
import type { EnvironmentProvider, EnvironmentUser } from './provider.ts';

export interface Ready {
  address: string;
  /** How long this request waited for a cold start; undefined when the environment was already up. */
  coldStartMs: number | undefined;
}

export interface ColdStartStats {
  count: number;
  failures: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
}

/** Answered when a wake cannot be waited for: the client is told to come back, never left hanging, never a 502. */
export function wakeRefusal(message: string, retryAfterSeconds: number): ServiceError {
  return new ServiceError('unavailable', message, { details: { retry_after: retryAfterSeconds } });
}

/**
 * Wakes environments single-flight: however many requests arrive for a sleeping user, the provider is asked to
 * start it once, and one probe loop polls the daemon's `/healthz` over the real network path every `probeIntervalMs`
 * until it answers or the deadline passes (`wakeTimeoutMs` after the first request asked). At most `maxWaiters`
 * requests wait per user; past that, or past the deadline, the answer is 503 with Retry-After.
 */
export class WakeCoordinator {
  readonly #provider: EnvironmentProvider;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #options: { probeIntervalMs: number; wakeTimeoutMs: number; maxWaiters: number };
  readonly #probe: (address: string) => Promise<boolean>;
  readonly #metrics: WakeMetrics | undefined;
  readonly #wakes: KeyedFlights<Ready>;
  readonly #durations: number[] = [];
  /** The address each user's daemon last answered its health probe at: only that one is trusted without a wake. */
  readonly #verified = new Map<string, string>();
  #coldStarts = 0;
  #failures = 0;

  constructor(options: {
    provider: EnvironmentProvider;
    clock: Clock;
    logger: Logger;
    probeIntervalMs: number;
    wakeTimeoutMs: number;
    maxWaiters: number;
    probe: (address: string) => Promise<boolean>;
    metrics?: WakeMetrics;
  }) {
    this.#provider = options.provider;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#options = options;
    this.#probe = options.probe;
    this.#metrics = options.metrics;
    this.#wakes = new KeyedFlights<Ready>(options.maxWaiters);
  }

  /**
   * The daemon's address, waking the environment first when it is not running. `deadline` (ms since the epoch) is when
   * the request gives up: ROUTER_WAKE_TIMEOUT after it first asked for its environment, provisioning included. A wake
   * ends at the deadline of the request that began it, so none who joined it later waits past their own.
   */
  async ready(user: EnvironmentUser, deadline: number): Promise<Ready> {
    const address = await this.#provider.address(user);
    // A daemon the provider has started is not yet one that answers: until the probe says so, requests join the wake.
    if (address !== undefined && this.#verified.get(user.id) === address) return { address, coldStartMs: undefined };
    this.#verified.delete(user.id);
    // One span for the start and the probes, in the trace of the request that began the wake.
    const flight = this.#wakes.join(user.id, () =>
      inSpan('environment wake', { attributes: { 'platform.environment.provider': this.#provider.name } }, () => this.#counted(user, deadline)),
    );
    if (flight === undefined) throw wakeRefusal(`too many requests are waiting for this environment to start (ROUTER_MAX_WAITERS); retry shortly`, 2);
    return flight;
  }

  /** How many requests wait for a user's environment now. */
  waiting(userId: string): number {
    return this.#wakes.waiters(userId);
  }

  /** Wakes under way and the requests waiting for them, over every user. */
  totals(): { flights: number; waiters: number } {
    return this.#wakes.totals();
  }

  stats(): ColdStartStats {
    const sorted = [...this.#durations].sort((a, b) => a - b);
    const at = (p: number) => (sorted.length === 0 ? null : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number));
    return { count: this.#coldStarts, failures: this.#failures, p50_ms: at(50), p99_ms: at(99), max_ms: sorted.at(-1) ?? null };
  }

  /** One wake, counted by how it ended (router_wakes_total and the rest, metrics.ts). */
  async #counted(user: EnvironmentUser, deadline: number): Promise<Ready> {
    const started = this.#clock.now().getTime();
    const outcome = { timedOut: false };
    try {
      const ready = await this.#wake(user, deadline, started, outcome);
      this.#metrics?.woke('ready', ready.coldStartMs ?? 0);
      return ready;
    } catch (error) {
      this.#metrics?.woke(outcome.timedOut ? 'timeout' : 'failed', this.#clock.now().getTime() - started);
      throw error;
    }
  }

  async #wake(user: EnvironmentUser, deadline: number, started: number, outcome: { timedOut: boolean }): Promise<Ready> {
    const timeout = () => {
      outcome.timedOut = true;
      this.#failures++;
      return wakeRefusal(`the environment did not become ready within ${this.#options.wakeTimeoutMs} ms (ROUTER_WAKE_TIMEOUT); retry shortly`, 5);
    };
    try {
      if ((await byDeadline(this.#clock, deadline, this.#provider.start(user))) === late) throw timeout();
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      this.#failures++;
      this.#logger.error({ err: error, user: user.id }, 'environment failed to start');
      throw wakeRefusal('the environment could not be started; retry shortly', 5);
    }
    for (;;) {
      const address = await this.#provider.address(user);
      if (address !== undefined && (await this.#probe(address))) {
        this.#verified.set(user.id, address);
        const duration = this.#clock.now().getTime() - started;
        this.#coldStarts++;
        this.#durations.push(duration);
        if (this.#durations.length > 1_000) this.#durations.shift();
        this.#logger.info({ user: user.id, ms: duration }, 'cold start');
        return { address, coldStartMs: duration };
      }
      const left = deadline - this.#clock.now().getTime();
      if (left <= 0) throw timeout();
      await this.#clock.sleep(Math.min(this.#options.probeIntervalMs, left));
    }
  }
}

/**
 * Whether the daemon at `address` is at work of its own (`/healthz` `working`: an intent walking or queued, a wake's
 * turn running). A daemon that does not answer within 5 s is not working. The wait is longer than the readiness
 * probe's: the reaper runs in the background, and a daemon busy on a loaded machine answers slowly (a 1 s limit let
 * the reaper stop a daemon in the middle of a wake's turn).
 */
export async function probeWorking(address: string): Promise<boolean> {
  try {
    const response = await fetch(`${address}/healthz`, { signal: AbortSignal.timeout(5_000) });
    const body = (await response.json()) as { data?: { working?: unknown } };
    return response.ok && body.data?.working === true;
  } catch {
    return false;
  }
}

/** GET <address>/healthz answered 200 within a second. */
export async function probeHealth(address: string): Promise<boolean> {
  try {
    const response = await fetch(`${address}/healthz`, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}
