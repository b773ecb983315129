import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { BudgetRepository, GrantOutcome, LedgerEntry } from './budget.repository.ts';
import { LeaseHolder, RecallWaits } from './lease-holder.ts';

export interface LeaseSettings {
  /** A holder that has not renewed for this long is gone, and its leases go back to their days. */
  ttlMs: number;
  /** A slice is sized for this many calls like the last one beyond the call that asks for it. */
  sliceCalls: number;
}

/** This instance's share of one actor's day. `held` mirrors the lease row, as far as this instance has submitted. */
interface Slice {
  readonly actor: string;
  readonly day: string;
  held: bigint;
  /** Reservations of the calls in flight; `held − inFlight` is free for the next calls. */
  inFlight: bigint;
  /** Spent as the database last said, plus this instance's bookings since. */
  spentView: bigint;
  /** Every cost this instance booked on the slice: tells which bookings a grant's figure already counts. */
  ownBooked: bigint;
  limit: bigint;
  /** False after a cap change: the next reservation must ask the database, which reads the cap again. */
  usable: boolean;
  /** Counts cap changes: a grant decided before one must not make the slice usable again. */
  capChanges: number;
  /** The one grant in flight for this slice: callers that do not fit wait for it rather than ask again. */
  growing: Promise<void> | undefined;
  /** The last grant refused to a call: calls that waited for it and need at least as much share its answer. */
  refusal: { need: bigint; spentUnits: bigint; limitUnits: bigint } | undefined;
  /** A background top-up was refused: the actor is near its cap, so only a call that needs budget asks again. */
  nearCap: boolean;
  lastCallAt: number;
}

/** A call's hold on its slice, settled once. */
export interface LeasedReservation {
  readonly slice: Slice;
  readonly holder: string;
  readonly units: bigint;
}

/** How long a refused call waits for the slices it recalled from other instances before asking once more. */
const recallWaitMs = 100;

export type LeaseOutcome =
  | { accepted: true; reservation: LeasedReservation; spentBeforeUnits: bigint; limitUnits: bigint }
  | { accepted: false; spentUnits: bigint; limitUnits: bigint };

/**
 * Reserves calls from slices of each actor's daily budget held in memory, so a call costs no database round trip
 * before it is forwarded. A slice is leased in one durable write (a grant: headroom checked under the day row's
 * lock, so the leases of every instance together never pass the cap), calls reserve from it synchronously, their
 * bookings shrink it, and what is left goes back when the actor goes quiet here, when another instance is refused
 * (recall), when the cap changes, at shutdown, and (a crash) when this holder's heartbeat lapses.
 *
 * Slices count only while this instance's holder is valid (`lease-holder.ts`), so it stops using a lease before
 * anyone may reclaim it.
 */
export class BudgetLeases {
  readonly #repository: BudgetRepository;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #settings: LeaseSettings;
  readonly #slices = new Map<string, Slice>();
  readonly #holder: LeaseHolder;
  readonly #recallWaits = new RecallWaits(recallWaitMs);

  constructor(args: { repository: BudgetRepository; clock: Clock; logger: Logger; settings: LeaseSettings }) {
    this.#repository = args.repository;
    this.#clock = args.clock;
    this.#logger = args.logger;
    this.#settings = args.settings;
    this.#holder = new LeaseHolder({ ...args, ttlMs: args.settings.ttlMs, onLapse: () => this.#dropSlices() });
  }

  /** Reserves `units` for a call of `actor` on `day`: in memory when the slice has room, else through a grant. */
  async reserve(actor: string, day: string, units: bigint): Promise<LeaseOutcome> {
    let recalled = false;
    for (;;) {
      // Looked up on every turn: an idle slice may have been given back and forgotten while this call waited.
      const slice = this.#sliceOf(actor, day);
      if (!this.#holder.valid()) {
        await this.#holder.renew();
        continue;
      }
      if (slice.usable && slice.held - slice.inFlight >= units) return this.#take(slice, units);
      if (slice.growing) {
        const refused = await this.#afterGrowing(slice, units);
        if (refused) return refused;
        continue;
      }
      const outcome = await this.#growFor(slice, units, !recalled);
      if (outcome === 'recalled') {
        // Refused while other instances held slices of this day; they were asked for them: wait, then ask once more.
        recalled = true;
        await this.#recallWaits.wait(sliceKey(actor, day));
        continue;
      }
      if (outcome === 'retry') continue;
      return outcome;
    }
  }

  /** How many budget leases (an actor's day each) this instance holds a slice of now: the metrics' gauge, at scrape time. */
  leasesHeld(): number {
    let held = 0;
    for (const slice of this.#slices.values()) if (slice.held > 0n) held++;
    return held;
  }

  /** Books a call's cost: local figures at once, the database write returned (streams await it before [DONE]). */
  settle(reservation: LeasedReservation, entry: LedgerEntry): Promise<void> {
    const { slice, units, holder } = reservation;
    const cost = entry.costUnits;
    slice.inFlight -= units;
    // A reservation made under a holder that has since lapsed has no lease left to take from: its cost is only spent.
    const take = holder === this.#holder.id ? (cost < slice.held ? cost : slice.held) : 0n;
    slice.held -= take;
    slice.ownBooked += cost;
    slice.spentView += cost;
    slice.lastCallAt = this.#clock.now().getTime();
    return this.#repository.book({ holder, actor: slice.actor, day: slice.day }, take, entry);
  }

  /** Nothing was served: the reservation goes back to its slice (no write). */
  release(reservation: LeasedReservation): void {
    reservation.slice.inFlight -= reservation.units;
  }

  /** An operator changed the actor's cap: give back what is free and read the cap again on the next call. */
  capChanged(actor: string | undefined): void {
    for (const slice of this.#slices.values())
      if (actor === undefined || slice.actor === actor) {
        slice.usable = false;
        slice.capChanges++;
        this.#giveBackFree(slice);
      }
  }

  /** Another instance was refused for this actor's day: give back what this one does not use right now, and say so. */
  recall(actor: string, day: string): void {
    const slice = this.#slices.get(sliceKey(actor, day));
    if (slice) this.#giveBackFree(slice, true);
  }

  /** Slices recalled for this actor's day were given back (by any instance): the calls waiting for them ask again. */
  returned(actor: string, day: string): void {
    this.#recallWaits.wake(sliceKey(actor, day));
  }

  /**
   * Housekeeping, every third of the TTL: renew the holder, reclaim the leases of holders that ended, and give back
   * the slices of actors with no call here for `idleMs` (the whole slice once nothing is in flight).
   */
  async maintain(idleMs = this.#settings.ttlMs): Promise<void> {
    if (!this.#holder.registered) return;
    await this.#holder.renew();
    const reclaimed = await this.#repository.reclaimOrphans();
    if (reclaimed > 0) this.#logger.info({ leases: reclaimed }, 'budget leases of ended gateway instances given back');
    this.returnIdle(idleMs);
  }

  /** Runs `maintain` every third of the TTL, on the injected clock, until `signal` aborts. */
  async runHousekeeping(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.#clock.sleep(this.#settings.ttlMs / 3, signal);
      if (signal.aborted) return;
      await this.maintain().catch((error: unknown) => this.#logger.warn({ err: error }, 'budget lease housekeeping failed; it runs again'));
    }
  }

  /** Gives back the free part of every slice idle for `idleMs`, and forgets those with nothing left or in flight. */
  returnIdle(idleMs: number): void {
    const now = this.#clock.now().getTime();
    for (const [key, slice] of this.#slices) {
      if (now - slice.lastCallAt < idleMs || slice.growing) continue;
      this.#giveBackFree(slice);
      if (slice.inFlight === 0n && slice.held === 0n) this.#slices.delete(key);
    }
  }

  /** At shutdown, once no call is in flight and every booking is committed: end the holder, its leases go back. */
  async retire(): Promise<void> {
    this.#slices.clear();
    await this.#holder.retire();
  }

  #take(slice: Slice, units: bigint): LeaseOutcome {
    slice.inFlight += units;
    slice.lastCallAt = this.#clock.now().getTime();
    const free = slice.held - slice.inFlight;
    // Below half a slice, top it up behind the call, so the next calls still find room without waiting.
    if (!slice.nearCap && !slice.growing && free * 2n < this.#extra(units)) void this.#topUp(slice, this.#extra(units));
    return { accepted: true, reservation: { slice, holder: this.#holder.id, units }, spentBeforeUnits: slice.spentView, limitUnits: slice.limit };
  }

  /**
   * Waits for the slice's grant in flight. When it was refused and this call, which waited for it, does not fit
   * either and needs at least as much, it is refused with the same figures: the two were decided together, as they
   * would have been in one batch (many parallel calls of an actor at its cap then cost one round trip, not a queue).
   */
  async #afterGrowing(slice: Slice, units: bigint): Promise<LeaseOutcome | undefined> {
    const before = slice.refusal;
    await slice.growing?.catch(() => {});
    const refusal = slice.refusal;
    if (refusal === undefined || refusal === before) return undefined;
    const free = slice.usable && slice.held > slice.inFlight ? slice.held - slice.inFlight : 0n;
    if (free >= units || units - free < refusal.need) return undefined;
    return { accepted: false, spentUnits: refusal.spentUnits, limitUnits: refusal.limitUnits };
  }

  /** The call does not fit: claim what is free, ask the database for the rest plus a slice's worth more. */
  async #growFor(slice: Slice, units: bigint, recall: boolean): Promise<LeaseOutcome | 'retry' | 'recalled'> {
    if (!slice.usable) this.#giveBackFree(slice);
    const free = slice.held > slice.inFlight ? slice.held - slice.inFlight : 0n;
    slice.inFlight += free;
    const need = units - free;
    const capChanges = slice.capChanges;
    const outcome = await this.#grant(slice, need, need + this.#extra(units), { foreground: true, recall });
    // The holder lapsed, its renewal grew old while the grant was out, or the cap changed meanwhile (the grant may
    // have read the old one): renew, or ask again, before counting on it.
    const stale = slice.capChanges !== capChanges || !this.#holder.valid();
    if (outcome === undefined || outcome.holderLost || stale) {
      slice.inFlight -= free;
      return 'retry';
    }
    if (outcome.granted === 0n) {
      slice.inFlight -= free;
      if (outcome.recalled) return 'recalled';
      return { accepted: false, spentUnits: slice.spentView, limitUnits: outcome.limitUnits };
    }
    slice.usable = true;
    slice.nearCap = false;
    slice.inFlight += need;
    slice.lastCallAt = this.#clock.now().getTime();
    return { accepted: true, reservation: { slice, holder: this.#holder.id, units }, spentBeforeUnits: slice.spentView, limitUnits: slice.limit };
  }

  async #topUp(slice: Slice, want: bigint): Promise<void> {
    const outcome = await this.#grant(slice, want, want, { foreground: false, recall: false }).catch((error: unknown) => {
      this.#logger.warn({ err: error }, 'budget top-up failed; the next call that needs budget asks again');
      return undefined;
    });
    if (outcome && !outcome.holderLost && outcome.granted === 0n) slice.nearCap = true;
  }

  /**
   * One grant for the slice, under the current holder. A result for a holder that has lapsed meanwhile is dropped:
   * the lapse reclaimed that lease, so it must not count here. Undefined: the holder lapsed, renew and try again.
   */
  async #grant(slice: Slice, need: bigint, want: bigint, mode: { foreground: boolean; recall: boolean }): Promise<GrantOutcome | undefined> {
    const holder = this.#holder.id;
    const bookedBefore = slice.ownBooked;
    let settled!: () => void;
    slice.growing = new Promise<void>((resolve) => {
      settled = resolve;
    });
    try {
      const outcome = await this.#repository.grant({ holder, actor: slice.actor, day: slice.day }, need, want, mode.recall);
      if (outcome.holderLost) {
        if (holder === this.#holder.id) this.#holder.lapse();
        return undefined;
      }
      if (holder !== this.#holder.id) return undefined;
      slice.held += outcome.granted;
      // Spent as the grant saw it, plus this instance's bookings since it asked that the grant did not see (those in
      // its own batch it did).
      slice.spentView = outcome.spentUnits - outcome.bookedAfterUnits + (slice.ownBooked - bookedBefore);
      slice.limit = outcome.limitUnits;
      // Set before the waiters wake (below): a call's final refusal is theirs too (see #afterGrowing).
      if (outcome.granted > 0n) slice.refusal = undefined;
      else if (mode.foreground && !outcome.recalled) slice.refusal = { need, spentUnits: slice.spentView, limitUnits: outcome.limitUnits };
      return outcome;
    } finally {
      slice.growing = undefined;
      settled();
    }
  }

  #giveBackFree(slice: Slice, announce = false): void {
    const free = slice.held - slice.inFlight;
    if (free <= 0n) return;
    slice.held -= free;
    void this.#repository
      .giveBack({ holder: this.#holder.id, actor: slice.actor, day: slice.day }, free, announce)
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not give a budget slice back; it returns when this instance stops'));
  }

  /** The holder lapsed: the leases it had are reclaimable, so no slice counts on them any more. */
  #dropSlices(): void {
    for (const slice of this.#slices.values()) {
      slice.held = 0n;
      slice.usable = false;
    }
  }

  #extra(units: bigint): bigint {
    return units * BigInt(this.#settings.sliceCalls);
  }

  #sliceOf(actor: string, day: string): Slice {
    const key = sliceKey(actor, day);
    let slice = this.#slices.get(key);
    if (!slice) {
      slice = {
        actor,
        day,
        held: 0n,
        inFlight: 0n,
        spentView: 0n,
        ownBooked: 0n,
        limit: 0n,
        usable: false,
        capChanges: 0,
        growing: undefined,
        refusal: undefined,
        nearCap: false,
        lastCallAt: this.#clock.now().getTime(),
      };
      this.#slices.set(key, slice);
    }
    return slice;
  }
}

function sliceKey(actor: string, day: string): string {
  return `${actor} ${day}`;
}
