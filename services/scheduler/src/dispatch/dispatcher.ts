import { randomUUID } from 'node:crypto';
import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { AlarmsRepository, ClaimedAlarm, NextWake } from '../alarms/alarms.repository.ts';
import { type FireOutcome, type FireResult, failedFireVerdict, fireOutcome } from '../alarms/fire-outcome.ts';
import type { SchedulerMetrics } from '../metrics.ts';
import type { DeliverWake, WakeBody } from './wake-delivery.ts';

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
  /** Where fires, their lateness and wake failures are counted; none: not counted. */
  metrics?: SchedulerMetrics;
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
  /** Resolvers waiting for the next delivery to finish (stop and runOnce). */
  #finishWaiters: (() => void)[] = [];
  /** Outcomes to write: `once` alarms fired (by id: their new state is the same for all) and every other outcome. */
  #fired: string[] = [];
  #pending: FireOutcome[] = [];
  #flushing: Promise<void> | undefined;
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
    return this.#inFlight === 0 && this.#flushing === undefined && !this.#hasPending();
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
    while (this.#inFlight > 0) await this.#nextFinish();
    await this.#flush();
    await this.#options.repository.releaseClaims(this.claimToken);
  }

  /** Test hook: vanish as a killed process would, leaving claims to expire and outcomes unwritten. */
  async crash(): Promise<void> {
    this.#crashed = true;
    // A killed process writes nothing more: outcomes not yet written are lost with it.
    this.#pending = [];
    this.#fired = [];
    this.#stopping = true;
    this.#wakeup.abort();
    await this.#running;
    await this.#unlisten?.();
  }

  /** Fires everything due now and waits until the outcomes are written (tests drive time with this). */
  async runOnce(): Promise<void> {
    while ((await this.#claimAndDeliver()).claimed > 0 || this.#inFlight > 0) await this.#nextFinish();
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
        const askedAt = this.#options.clock.now().getTime();
        // A full claim may have left more due; a short one took everything due and says when to look again.
        const { next } = await this.#claimAndDeliver();
        if (this.#stopping) break;
        if (next === undefined) continue;
        const { nextAt, now } = next;
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

  /** Claims what is due up to the free capacity and sends the wakes; `next` comes with a claim that took everything due. */
  async #claimAndDeliver(): Promise<{ claimed: number; next?: NextWake }> {
    const capacity = this.#options.concurrency - this.#inFlight;
    if (capacity <= 0 || this.#stopping) return { claimed: 0 };
    const { alarms, next } = await this.#options.repository.claimDue(this.claimToken, capacity, this.#options.leaseMs);
    if (alarms.length > 0) {
      // Every alarm of a claim was claimed at the same moment: one string for all their wakes.
      const claimedAt = (alarms[0] as ClaimedAlarm).claimed_at;
      const firedAt = claimedAt.toISOString();
      const metrics = this.#options.metrics;
      if (metrics) for (const alarm of alarms) metrics.lateness((claimedAt.getTime() - alarm.next_fire_at.getTime()) / 1000);
      this.#inFlight += alarms.length;
      for (const alarm of alarms) void this.#fire(alarm, firedAt);
    }
    return next ? { claimed: alarms.length, next } : { claimed: alarms.length };
  }

  /** Resolves when the next delivery finishes, or at once when none is in flight. */
  #nextFinish(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#finishWaiters.push(resolve));
  }

  /** Delivers one wake and queues its outcome; never rejects (a delivery failure is an outcome). */
  async #fire(alarm: ClaimedAlarm, firedAt: string): Promise<void> {
    try {
      const result = await this.#deliver({
        user_id: alarm.owner_user_id,
        did: alarm.owner_did,
        alarm_id: alarm.id,
        label: alarm.label,
        wake_message: alarm.wake_message,
        conversation_id: alarm.conversation_id,
        payload: alarm.payload,
        scheduled_for: alarm.occurrence_at.toISOString(),
        fired_at: firedAt,
        attempt: alarm.attempt,
      });
      if (this.#crashed) return;
      const metrics = this.#options.metrics;
      if (!result.ok) {
        this.#options.logger.warn({ alarm_id: alarm.id, attempt: alarm.attempt, error: result.error }, 'wake delivery failed');
        metrics?.wakeFailed(result.reason);
      }
      // A fired `once` alarm needs nothing computed: its id is its whole outcome (see completeFires).
      if (result.ok && alarm.kind === 'once') this.#fired.push(alarm.id);
      else {
        // The next occurrence is reckoned from the claim time (database clock), not from when the delivery ended.
        const outcome = fireOutcome(alarm, result, alarm.claimed_at, alarm.claimed_at);
        this.#pending.push(outcome);
        if (!result.ok) metrics?.fired(failedFireVerdict(alarm, outcome));
      }
      if (result.ok) metrics?.fired('delivered');
      this.#scheduleFlush();
    } finally {
      this.#inFlight--;
      if (this.#finishWaiters.length > 0) for (const resolve of this.#finishWaiters.splice(0)) resolve();
      // Wake a loop that waits for room only once there is room for a worthwhile batch.
      if (this.#waitingForCapacity && (this.#inFlight === 0 || this.#options.concurrency - this.#inFlight >= this.#minimumClaim)) this.#wakeup.abort();
    }
  }

  /** The delivery, with a throw (a delivery function breaking its contract) turned into a failed fire. */
  async #deliver(wake: WakeBody): Promise<FireResult> {
    try {
      return await this.#options.deliver(wake);
    } catch (error) {
      return { ok: false, error: `wake delivery failed: ${(error as Error).message}`, reason: 'error' };
    }
  }

  #hasPending(): boolean {
    return this.#fired.length > 0 || this.#pending.length > 0;
  }

  // Outcomes are written in batches: one UPDATE for everything that finished while the last one ran.
  #scheduleFlush(): void {
    if (this.#flushing) return;
    this.#flushing = (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.#hasPending() && !this.#crashed) {
        const batch = { fired: this.#fired, outcomes: this.#pending };
        this.#fired = [];
        this.#pending = [];
        await this.#writeOutcomes(batch);
      }
    })().finally(() => {
      this.#flushing = undefined;
      if (this.#hasPending() && !this.#crashed) this.#scheduleFlush();
    });
  }

  /**
   * Writes one batch, trying three times a second apart: a passing database hiccup should not turn into
   * repeated wakes. After that the claims keep their leases and the alarms fire again after expiry,
   * under the same Idempotency-Key.
   */
  async #writeOutcomes(batch: { fired: string[]; outcomes: FireOutcome[] }): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#options.repository.completeFires(this.claimToken, batch, this.#options.leaseMs);
        // A retry or the next occurrence may now be due before the loop planned to look again.
        for (const outcome of batch.outcomes) if (outcome.status === 'active') this.#hintDueAt(outcome.next_fire_at.getTime());
        return;
      } catch (error) {
        const count = batch.fired.length + batch.outcomes.length;
        this.#options.logger.error({ err: error, count, attempt }, 'writing fire outcomes failed');
        if (attempt === 3 || this.#crashed) return;
        await this.#options.clock.sleep(1000);
      }
    }
  }

  async #flush(): Promise<void> {
    while (this.#flushing || this.#hasPending()) {
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
