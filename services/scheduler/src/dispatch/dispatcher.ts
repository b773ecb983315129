import { randomUUID } from 'node:crypto';
import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { AlarmsRepository, ClaimedAlarm } from '../alarms/alarms.repository.ts';
import { type FireOutcome, fireOutcome } from '../alarms/fire-outcome.ts';
import type { DeliverWake } from './wake-delivery.ts';

export interface DispatcherOptions {
  repository: AlarmsRepository;
  deliver: DeliverWake;
  clock: Clock;
  logger: Logger;
  /** Subscribes to "an alarm was created" hints (LISTEN/NOTIFY); the payload is its next_fire_at. */
  onAlarmCreated: (hint: (payload: string) => void) => Promise<() => Promise<void>>;
  /** Most deliveries in flight at once per instance. */
  concurrency: number;
  /** How long a claim lasts before another instance may take it over; must exceed the wake timeout. */
  leaseMs: number;
  /** Longest sleep with nothing due, as a safety net should a notification be lost. */
  maxIdleMs: number;
}

/**
 * Fires due alarms. Any number of instances may run on one PostgreSQL: each claims due rows with
 * SKIP LOCKED under a lease, delivers them with bounded concurrency, and writes outcomes in batches.
 * With nothing due it sleeps until the next due time (by the database's clock) or until a
 * notification says an earlier alarm was created: no polling.
 */
export class Dispatcher {
  readonly claimToken = randomUUID();
  readonly #options: DispatcherOptions;
  #inFlight = 0;
  #pending: FireOutcome[] = [];
  #flushing: Promise<void> | undefined;
  #deliveries = new Set<Promise<void>>();
  #wakeup = new AbortController();
  #plannedWakeAt = Number.POSITIVE_INFINITY;
  #waitingForCapacity = false;
  #running: Promise<void> | undefined;
  #stopping = false;
  #crashed = false;
  #unlisten: (() => Promise<void>) | undefined;

  readonly #minimumClaim: number;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#minimumClaim = Math.max(1, Math.floor(options.concurrency / 4));
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** True when no wake is in flight and no outcome waits to be written. */
  get idle(): boolean {
    return this.#deliveries.size === 0 && this.#flushing === undefined && this.#pending.length === 0;
  }

  /** When the idle loop will look again (epoch ms), or Infinity while it is working. */
  get sleepingUntil(): number {
    return this.#plannedWakeAt;
  }

  async start(): Promise<void> {
    this.#unlisten = await this.#options.onAlarmCreated((payload) => this.#onHint(payload));
    this.#running = this.#loop().catch((error) => this.#options.logger.fatal({ err: error }, 'dispatcher loop ended'));
  }

  /** Graceful: stop claiming, finish the deliveries in flight, write their outcomes, give back any claim left. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wakeup.abort();
    await this.#running;
    await this.#unlisten?.();
    await Promise.all(this.#deliveries);
    await this.#flush();
    await this.#options.repository.releaseClaims(this.claimToken);
  }

  /** Test hook: vanish as a killed process would, leaving claims to expire and outcomes unwritten. */
  async crash(): Promise<void> {
    this.#crashed = true;
    // A killed process writes nothing more: outcomes not yet written are lost with it.
    this.#pending = [];
    this.#stopping = true;
    this.#wakeup.abort();
    await this.#running;
    await this.#unlisten?.();
  }

  /** Fires everything due now and waits until the outcomes are written (tests drive time with this). */
  async runOnce(): Promise<void> {
    while ((await this.#claimAndDeliver()) > 0 || this.#deliveries.size > 0) {
      await Promise.race(this.#deliveries);
    }
    await this.#flush();
  }

  async #loop(): Promise<void> {
    while (!this.#stopping) {
      this.#wakeup = new AbortController();
      try {
        const capacity = this.#options.concurrency - this.#inFlight;
        // Under load, claim in batches of at least a quarter of the window: one query per delivery finished would cost more than the delivery.
        if (this.#inFlight > 0 && capacity < this.#minimumClaim) {
          this.#waitingForCapacity = true;
          await this.#options.clock.sleep(this.#options.maxIdleMs, this.#wakeup.signal);
          this.#waitingForCapacity = false;
          continue;
        }
        if ((await this.#claimAndDeliver()) > 0) continue;
        const askedAt = this.#options.clock.now().getTime();
        const { nextAt, now } = await this.#options.repository.nextWake();
        const delay = nextAt === null ? this.#options.maxIdleMs : Math.min(this.#options.maxIdleMs, nextAt.getTime() - now.getTime());
        if (delay <= 0) continue;
        this.#plannedWakeAt = now.getTime() + delay;
        // Time went on while the query ran; a sleep measured from the end of it would overshoot by that much
        // (with a manual clock, by however far a test moved it meanwhile, and then never wake).
        const elapsed = this.#options.clock.now().getTime() - askedAt;
        await this.#options.clock.sleep(Math.max(0, delay - elapsed), this.#wakeup.signal);
        this.#plannedWakeAt = Number.POSITIVE_INFINITY;
      } catch (error) {
        if (this.#stopping) return;
        this.#options.logger.error({ err: error }, 'dispatch cycle failed; retrying in 1 s');
        await this.#options.clock.sleep(1000, this.#wakeup.signal);
      }
    }
  }

  async #claimAndDeliver(): Promise<number> {
    const capacity = this.#options.concurrency - this.#inFlight;
    if (capacity <= 0 || this.#stopping) return 0;
    const claimed = await this.#options.repository.claimDue(this.claimToken, capacity, this.#options.leaseMs);
    for (const alarm of claimed) this.#track(this.#fire(alarm));
    return claimed.length;
  }

  #track(delivery: Promise<void>): void {
    this.#inFlight++;
    const tracked = delivery.finally(() => {
      this.#inFlight--;
      this.#deliveries.delete(tracked);
      // Wake a loop that waits for room only once there is room for a worthwhile batch.
      if (this.#waitingForCapacity && (this.#inFlight === 0 || this.#options.concurrency - this.#inFlight >= this.#minimumClaim)) this.#wakeup.abort();
    });
    this.#deliveries.add(tracked);
  }

  async #fire(alarm: ClaimedAlarm): Promise<void> {
    const result = await this.#options.deliver({
      user_id: alarm.owner_user_id,
      did: alarm.owner_did,
      alarm_id: alarm.id,
      label: alarm.label,
      wake_message: alarm.wake_message,
      conversation_id: alarm.conversation_id,
      payload: alarm.payload,
      scheduled_for: alarm.occurrence_at.toISOString(),
      fired_at: alarm.claimed_at.toISOString(),
      attempt: alarm.attempt,
    });
    if (this.#crashed) return;
    if (!result.ok) this.#options.logger.warn({ alarm_id: alarm.id, attempt: alarm.attempt, error: result.error }, 'wake delivery failed');
    // The next occurrence is reckoned from the claim time (database clock), not from when the delivery ended.
    this.#pending.push(fireOutcome(alarm, result, alarm.claimed_at, alarm.claimed_at));
    this.#scheduleFlush();
  }

  // Outcomes are written in batches: one UPDATE for everything that finished while the last one ran.
  #scheduleFlush(): void {
    if (this.#flushing) return;
    this.#flushing = (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.#pending.length > 0 && !this.#crashed) {
        const batch = this.#pending;
        this.#pending = [];
        await this.#writeOutcomes(batch);
      }
    })().finally(() => {
      this.#flushing = undefined;
      if (this.#pending.length > 0 && !this.#crashed) this.#scheduleFlush();
    });
  }

  /**
   * Writes one batch, trying three times a second apart: a passing database hiccup should not turn into
   * repeated wakes. After that the claims keep their leases and the alarms fire again after expiry,
   * under the same Idempotency-Key.
   */
  async #writeOutcomes(batch: FireOutcome[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#options.repository.completeFires(this.claimToken, batch);
        // A retry or the next occurrence may now be due before the loop planned to look again.
        for (const outcome of batch) if (outcome.status === 'active') this.#hintDueAt(outcome.next_fire_at.getTime());
        return;
      } catch (error) {
        this.#options.logger.error({ err: error, count: batch.length, attempt }, 'writing fire outcomes failed');
        if (attempt === 3 || this.#crashed) return;
        await this.#options.clock.sleep(1000);
      }
    }
  }

  async #flush(): Promise<void> {
    while (this.#flushing || this.#pending.length > 0) {
      if (!this.#flushing) this.#scheduleFlush();
      await this.#flushing;
    }
  }

  /** A NOTIFY from a create: its payload is the new alarm's next_fire_at (empty after a reconnect: look again). */
  #onHint(payload: string): void {
    this.#hintDueAt(Date.parse(payload));
  }

  #hintDueAt(at: number): void {
    if (Number.isNaN(at) || at < this.#plannedWakeAt) this.#wakeup.abort();
  }
}
