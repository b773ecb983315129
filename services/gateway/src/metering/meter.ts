import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { LedgerBasis, LedgerKind } from '../db/schema.ts';
import { GatewayError } from '../http/openai-errors.ts';
import type { PlatformHeaders } from '../http/platform-headers.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { RateCard } from '../rate-cards/rate-card-file.ts';
import type { BudgetLeases, LeasedReservation } from './budget-leases.ts';
import { costUnits, formatCredit, type ModelPrice } from './credit.ts';
import type { Projection } from './projection.ts';

/** Token counts as the upstream reported them. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** A metered call: who, what, and the card and price that were current when it was accepted. */
export interface MeteredCall {
  headers: PlatformHeaders;
  model: string;
  kind: LedgerKind;
  streamed: boolean;
  card: RateCard;
  price: ModelPrice;
}

/** What the cost headers report after a debit. */
export interface Debit {
  costUnits: bigint;
  spentUnits: bigint;
  limitUnits: bigint;
  rateTableVersion: number;
}

/** The UTC day of an instant: the ledger's day. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * One call's reservation, settled exactly once: to the reported usage, to its own amount (no usage arrived), or
 * released (nothing was served). It keeps the day it was made on, so a call running past midnight is booked whole
 * on the day it started, as its reservation was.
 */
export class Reservation {
  readonly units: bigint;
  /** The actor's spend today as this instance knew it when the reservation was granted. */
  readonly spentBeforeUnits: bigint;
  readonly limitUnits: bigint;
  readonly #call: MeteredCall;
  readonly #day: string;
  readonly #leases: BudgetLeases;
  readonly #held: LeasedReservation;
  readonly #projection: Projection;
  readonly #metrics: GatewayMetrics | undefined;
  #closed = false;

  constructor(args: {
    call: MeteredCall;
    day: string;
    units: bigint;
    spentBeforeUnits: bigint;
    limitUnits: bigint;
    projection: Projection;
    leases: BudgetLeases;
    held: LeasedReservation;
    metrics?: GatewayMetrics | undefined;
  }) {
    this.#call = args.call;
    this.#day = args.day;
    this.units = args.units;
    this.spentBeforeUnits = args.spentBeforeUnits;
    this.limitUnits = args.limitUnits;
    this.#projection = args.projection;
    this.#leases = args.leases;
    this.#held = args.held;
    this.#metrics = args.metrics;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** What the reported usage costs at the card that was current when the call was accepted. */
  costOf(usage: Usage): bigint {
    return costUnits(this.#call.price, this.#call.card.usdPerCreditPico, usage.inputTokens, usage.outputTokens);
  }

  /**
   * The cost headers' figures for a debit of `cost`, known before the booking commits: spent as of this reservation
   * plus this call (exact unless other instances served the same actor since this one last took budget for it).
   */
  debitFor(cost: bigint): Debit {
    return { costUnits: cost, spentUnits: this.spentBeforeUnits + cost, limitUnits: this.limitUnits, rateTableVersion: this.#call.card.version };
  }

  /** Debits the cost of the reported usage at the reservation's card; resolves once the booking is committed. */
  settle(usage: Usage): Promise<void> {
    return this.#debit(this.costOf(usage), usage, 'usage');
  }

  /** Debits the whole reservation: the client left and the upstream never said what the answer used. */
  chargeReservation(): Promise<void> {
    return this.#debit(this.units, { inputTokens: this.#projection.inputTokens, outputTokens: this.#projection.outputTokens }, 'reservation');
  }

  /** Nothing was served: the reservation goes back to the slice it came from (no database write). */
  release(): void {
    if (this.#take()) this.#leases.release(this.#held);
  }

  #debit(cost: bigint, usage: Usage, basis: LedgerBasis): Promise<void> {
    if (!this.#take()) return Promise.reject(new Error('reservation already closed'));
    const { headers, model } = this.#call;
    const booked = this.#leases.settle(this.#held, {
      actor: headers.actor,
      day: this.#day,
      slot: headers.slot,
      model: this.#call.model,
      kind: this.#call.kind,
      streamed: this.#call.streamed,
      rateTableVersion: this.#call.card.version,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      costUnits: cost,
      basis,
      intentId: headers.intentId,
      goalId: headers.goalId,
      kindRoute: headers.kindRoute,
    });
    // Spent once booked: a booking that fails to commit is logged where it is awaited, and counts nothing here.
    const metrics = this.#metrics;
    if (metrics) booked.then(() => metrics.creditsSpent(metrics.model(model), headers.slot, cost), ignore);
    return booked;
  }

  #take(): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    return true;
  }
}

/** Reserves the projected cost of a call against its actor's daily cap, or refuses it with 429 `budget_exhausted`. */
export class Meter {
  readonly #leases: BudgetLeases;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #metrics: GatewayMetrics | undefined;

  constructor(args: { leases: BudgetLeases; clock: Clock; logger: Logger; metrics?: GatewayMetrics }) {
    this.#leases = args.leases;
    this.#clock = args.clock;
    this.#logger = args.logger;
    this.#metrics = args.metrics;
  }

  async reserve(call: MeteredCall, projection: Projection): Promise<Reservation> {
    const units = costUnits(call.price, call.card.usdPerCreditPico, projection.inputTokens, projection.outputTokens);
    const day = utcDay(this.#clock.now());
    const actor = call.headers.actor;
    const outcome = await this.#leases.reserve(actor, day, units);
    if (outcome.accepted)
      return new Reservation({
        call,
        day,
        units,
        spentBeforeUnits: outcome.spentBeforeUnits,
        limitUnits: outcome.limitUnits,
        projection,
        leases: this.#leases,
        held: outcome.reservation,
        metrics: this.#metrics,
      });
    this.#logger.info({ actor, day, projected: formatCredit(units) }, 'call refused: daily budget');
    this.#metrics?.budgetRefused(outcome.limitUnits === 0n ? 'blocked' : 'daily_cap');
    throw budgetExhausted(outcome.spentUnits, outcome.limitUnits, units);
  }
}

const ignore = () => undefined;

function budgetExhausted(spentUnits: bigint, limitUnits: bigint, projectedUnits: bigint): GatewayError {
  const spent = formatCredit(spentUnits);
  const limit = formatCredit(limitUnits);
  const message =
    limitUnits === 0n
      ? 'daily budget exhausted: this actor is blocked (daily cap 0)'
      : `daily budget exhausted: ${spent} of ${limit} credits spent today (UTC) and this call may cost up to ${formatCredit(projectedUnits)}; lower max_tokens or wait for the next UTC day`;
  return new GatewayError(429, 'insufficient_quota', 'budget_exhausted', message, { extra: { spent_credit: spent, limit_credit: limit }, noRetry: true });
}
