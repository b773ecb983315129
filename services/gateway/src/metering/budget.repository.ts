import type { Clock } from '@platform/kit/clock';
import { uuidv7 } from '@platform/kit/ids';
import { type Kysely, sql } from 'kysely';
import type { GatewaySchema, LedgerBasis, LedgerKind } from '../db/schema.ts';
import { GroupCommit } from './group-commit.ts';

export interface ReserveOutcome {
  accepted: boolean;
  /** Spent today before this reservation (accepted) or now (refused). */
  spentUnits: bigint;
  limitUnits: bigint;
}

export interface LedgerEntry {
  actor: string;
  day: string;
  slot: string;
  model: string;
  kind: LedgerKind;
  streamed: boolean;
  rateTableVersion: number;
  inputTokens: number;
  outputTokens: number;
  costUnits: bigint;
  basis: LedgerBasis;
  intentId: string | null;
  goalId: string | null;
  kindRoute: string | null;
}

/** A reservation, or a booking of one: a settlement (`entry` set: debit and ledger row) or a release (no entry). */
type Op =
  | { op: 'reserve'; actor: string; day: string; units: bigint }
  | { op: 'book'; actor: string; day: string; reservedUnits: bigint; entry: LedgerEntry | undefined };

interface OpOutcome {
  accepted: boolean;
  spentUnits: bigint;
  limitUnits: bigint | null;
}

export interface BudgetOptions {
  defaultCapUnits: bigint;
  /** Commit without waiting for the WAL flush (GATEWAY_ASYNC_COMMIT). */
  asyncCommit: boolean;
  maxBatch?: number;
  /** Batches in flight at once (each holds a pooled connection); the pool has 10. */
  maxInFlight?: number;
}

/**
 * The hot path's SQL. Every call reserves once and books once (settle or release), and every op goes through one
 * ordered, group-committed stream into `gateway_apply` (see the migration): under load many calls share a statement
 * and a commit, and each reservation is still decided row by row under the day row's lock. Ops of one actor-day are
 * applied in submission order, so an actor's booking submitted before its next reservation always lands first.
 */
export class BudgetRepository {
  readonly #db: Kysely<GatewaySchema>;
  readonly #clock: Clock;
  readonly #options: BudgetOptions;
  readonly #ops: GroupCommit<Op, OpOutcome>;

  constructor(db: Kysely<GatewaySchema>, clock: Clock, options: BudgetOptions) {
    this.#db = db;
    this.#clock = clock;
    this.#options = options;
    this.#ops = new GroupCommit((ops) => this.#apply(ops), {
      keyOf: (op) => `${op.actor} ${op.day}`,
      maxBatch: options.maxBatch ?? 512,
      maxInFlight: options.maxInFlight ?? 4,
    });
  }

  /**
   * Adds `units` to the actor's reservation for `day` if spent + reserved + units stays within the actor's cap (its
   * override, else the default) and the cap is not 0. The conditional upsert locks the day row and re-checks the
   * condition on its newest version, so parallel reservations by one actor, from any instance, never overshoot.
   */
  async reserve(actor: string, day: string, units: bigint): Promise<ReserveOutcome> {
    const outcome = await this.#ops.submit({ op: 'reserve', actor, day, units });
    return { accepted: outcome.accepted, spentUnits: outcome.spentUnits, limitUnits: outcome.limitUnits ?? 0n };
  }

  /** Moves a reservation to spent at the actual cost and writes the ledger row. Queued at once; resolves to spent after. */
  async settle(entry: LedgerEntry, reservedUnits: bigint): Promise<bigint> {
    return (await this.#ops.submit({ op: 'book', actor: entry.actor, day: entry.day, reservedUnits, entry })).spentUnits;
  }

  /** Gives a reservation back: the call was refused upstream or never reached it. */
  async release(actor: string, day: string, reservedUnits: bigint): Promise<void> {
    await this.#ops.submit({ op: 'book', actor, day, reservedUnits, entry: undefined });
  }

  /** Resolves once every op submitted so far is committed: a non-streaming answer leaves before its booking commits. */
  flushed(): Promise<void> {
    return this.#ops.idle();
  }

  async #apply(ops: Op[]): Promise<OpOutcome[]> {
    // The injected clock, like the day: a row's created_at and its day never disagree, and tests move both together.
    const at = this.#clock.now().toISOString();
    const rows = ops.map((op, i) => {
      if (op.op === 'reserve') return { i, op: op.op, actor: op.actor, day: op.day, units: op.units.toString() };
      const booking = { i, op: op.op, actor: op.actor, day: op.day, units: op.reservedUnits.toString() };
      const entry = op.entry;
      if (!entry) return { ...booking, cost: '0', debit: false };
      return {
        ...booking,
        cost: entry.costUnits.toString(),
        debit: true,
        id: uuidv7(),
        created_at: at,
        slot: entry.slot,
        model: entry.model,
        kind: entry.kind,
        streamed: entry.streamed,
        rate_table_v: entry.rateTableVersion,
        input_tokens: entry.inputTokens,
        output_tokens: entry.outputTokens,
        basis: entry.basis,
        intent_id: entry.intentId,
        goal_id: entry.goalId,
        kind_route: entry.kindRoute,
      };
    });
    const result = await sql<{ op_index: number; spent: bigint; cap: bigint | null; accepted: boolean }>`
      select op_index, spent, cap, accepted from gateway_apply(${JSON.stringify(rows)}::jsonb, ${this.#options.defaultCapUnits}::int8, ${this.#options.asyncCommit})`.execute(
      this.#db,
    );
    const outcomes: OpOutcome[] = new Array(ops.length);
    for (const row of result.rows) outcomes[row.op_index] = { accepted: row.accepted, spentUnits: row.spent, limitUnits: row.cap };
    return outcomes;
  }
}
