import type { Clock } from '@platform/kit/clock';
import { prepared } from '@platform/kit/db/prepared-statements';
import { isDatabaseUnavailable } from '@platform/kit/db/unavailable';
import { GroupCommit } from '@platform/kit/group-commit';
import { uuidv7 } from '@platform/kit/ids';
import { type Kysely, sql } from 'kysely';
import type { GatewaySchema, LedgerBasis, LedgerKind } from '../db/schema.ts';

/** Sent by a refused grant while other holders keep unused slices of that actor's day: `<actor> <day>`. */
export const recallChannel = 'gateway_budget_recall';
/** Sent once slices given back on a recall are committed: `<actor> <day>`. */
export const returnedChannel = 'gateway_budget_returned';

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

/** Which lease an op moves: a holder's slice of an actor's day. */
export interface LeaseKey {
  holder: string;
  actor: string;
  day: string;
}

export type GrantOutcome =
  /** `recalled`: refused while other holders had slices of the day, which were asked back. */
  /**
   * `spentUnits` is the day's spent as the grant saw it, after the bookings of its batch, those submitted after the
   * grant too; `bookedAfterUnits` is what those later ones of the same actor-day cost, so a caller that counts its own
   * bookings since it asked does not count them twice.
   */
  | { granted: bigint; spentUnits: bigint; bookedAfterUnits: bigint; limitUnits: bigint; holderLost: false; recalled: boolean }
  /** The holder's heartbeat had lapsed: nothing granted; it must register again under a new id. */
  | { holderLost: true };

/**
 * - grant: adds between `need` and `want` units to the holder's lease if the day's headroom allows `need`.
 * - book: moves `take` from the lease to spent and writes the ledger row at `entry.costUnits`.
 * - return: gives `take` of the lease back to the day.
 */
type Op =
  | (LeaseKey & { op: 'grant'; need: bigint; want: bigint; recall: boolean })
  | (LeaseKey & { op: 'book'; take: bigint; entry: LedgerEntry; id: string })
  | (LeaseKey & { op: 'return'; take: bigint; announce: boolean });

/** An op's actor-day: the queue keeps each one's ops in submission order. */
const dayKeyOf = (op: Op) => `${op.actor} ${op.day}`;

/** How long a served call's booking is sent again while the database cannot take it: beyond, it is logged and lost. */
const bookingRetryMs = 60_000;

export interface BudgetOptions {
  defaultCapUnits: bigint;
  /** Commit without waiting for the WAL flush (GATEWAY_ASYNC_COMMIT). */
  asyncCommit: boolean;
  /** How long a whole answer's booking or a return (nobody waits on them) may wait for others to share its batch; grants and streams' bookings never wait. */
  bookingLingerMs?: number;
  maxBatch?: number;
  /** Batches in flight at once (each holds a pooled connection); the pool has 10. */
  maxInFlight?: number;
  /** Several connections (PostgreSQL): a batch locks its day rows in a fixed order first, so batches cannot deadlock. */
  lockRows: boolean;
}

/**
 * The metering SQL. Grants, bookings and returns go through one ordered, group-committed stream into
 * `gateway_apply` (see the lease migration): under load many calls share a statement and a commit. Ops of one
 * actor-day are applied in submission order (a return submitted before a grant lands first), other actors go ahead.
 */
export class BudgetRepository {
  readonly #db: Kysely<GatewaySchema>;
  readonly #clock: Clock;
  readonly #options: BudgetOptions;
  readonly #ops: GroupCommit<Op, GrantOutcome | undefined>;
  /** Bookings being sent again after the database could not take them (`book`). */
  readonly #retrying = new Set<Promise<void>>();

  constructor(db: Kysely<GatewaySchema>, clock: Clock, options: BudgetOptions) {
    this.#db = db;
    this.#clock = clock;
    this.#options = options;
    this.#ops = new GroupCommit((ops) => this.#apply(ops), {
      keyOf: dayKeyOf,
      maxBatch: options.maxBatch ?? 512,
      maxInFlight: options.maxInFlight ?? 4,
      lingerMs: options.bookingLingerMs ?? 0,
      // A caller waits on a grant, and a stream's [DONE] on its booking; a whole answer has left before its booking.
      urgent: (op) => op.op === 'grant' || (op.op === 'book' && op.entry.streamed),
    });
  }

  /**
   * Grows the holder's lease by up to `want` units when the actor's headroom (cap − spent − every lease) is at least
   * `need`; leases of lapsed holders on that day are reclaimed first. Refused (granted 0) when the cap is 0. A refused
   * grant with `recall` asks the other holders of the day to give their unused slices back (NOTIFY).
   */
  async grant(key: LeaseKey, need: bigint, want: bigint, recall: boolean): Promise<GrantOutcome> {
    return (await this.#ops.submit({ op: 'grant', ...key, need, want, recall })) as GrantOutcome;
  }

  /**
   * Debits a call: `take` leaves the lease, the cost goes to spent and the ledger row is written. The call was served,
   * so a booking the database could not take (unreachable, restarting) is sent again, under the same ledger id, until
   * it lands or `bookingRetryMs` have passed: one whose first commit landed unseen is skipped by `gateway_apply`.
   */
  async book(key: LeaseKey, take: bigint, entry: LedgerEntry): Promise<void> {
    const op: Op = { op: 'book', ...key, take, entry, id: uuidv7() };
    try {
      await this.#ops.submit(op);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      await this.#track(this.#bookAgain(op, error));
    }
  }

  /** Gives part of a lease back to the actor's day; `announce` tells the instances waiting for it (a recall). */
  async giveBack(key: LeaseKey, take: bigint, announce: boolean): Promise<void> {
    await this.#ops.submit({ op: 'return', ...key, take, announce });
  }

  /**
   * Resolves once every op submitted so far is committed (bookings being sent again included): a non-streaming answer
   * leaves before its booking commits.
   */
  async flushed(): Promise<void> {
    await this.#ops.idle();
    while (this.#retrying.size > 0) {
      await Promise.allSettled([...this.#retrying]);
      await this.#ops.idle();
    }
  }

  async #bookAgain(op: Op, firstError: unknown): Promise<void> {
    let error = firstError;
    const giveUpAt = Date.now() + bookingRetryMs;
    // Wall time, not the injected clock: how soon another process (PostgreSQL) is back is not business time.
    for (let pause = 100; Date.now() < giveUpAt; pause = Math.min(pause * 2, 2_000)) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      try {
        await this.#ops.submit(op);
        return;
      } catch (next) {
        if (!isDatabaseUnavailable(next)) throw next;
        error = next;
      }
    }
    throw error;
  }

  async #track(retry: Promise<void>): Promise<void> {
    this.#retrying.add(retry);
    try {
      await retry;
    } finally {
      this.#retrying.delete(retry);
    }
  }

  /** Renews the holder (or registers it) and ends lapsed holders; false when this holder had lapsed. */
  async heartbeat(holder: string, register: boolean, ttlMs: number): Promise<boolean> {
    const result = await sql<{ alive: boolean }>`
      select gateway_lease_heartbeat(${holder}::uuid, ${register}, ${this.#clock.sqlNow()}, ${ttlMs}::int) as alive`.execute(this.#db);
    return result.rows[0]?.alive === true;
  }

  /** Returns the leases of ended holders to their days; how many leases came back. */
  async reclaimOrphans(): Promise<number> {
    const result = await sql<{ reclaimed: number }>`select gateway_reclaim_orphan_leases() as reclaimed`.execute(this.#db);
    return result.rows[0]?.reclaimed ?? 0;
  }

  /** Ends the holder at shutdown: every lease it still holds goes back at once. */
  async retire(holder: string): Promise<void> {
    await this.#db.deleteFrom('lease_holders').where('holder', '=', holder).execute();
    await this.reclaimOrphans();
  }

  async #apply(ops: Op[]): Promise<Array<GrantOutcome | undefined>> {
    // The injected clock, like the day: a row's created_at and its day never disagree, and tests move both together.
    const createdAt = this.#clock.now().toISOString();
    const rows = ops.map((op, i) => {
      const base = { i, op: op.op, holder: op.holder, actor: op.actor, day: op.day };
      if (op.op === 'grant') return { ...base, need: op.need.toString(), want: op.want.toString(), recall: op.recall };
      if (op.op === 'return') return { ...base, take: op.take.toString(), cost: '0', debit: false, announce: op.announce };
      const entry = op.entry;
      return {
        ...base,
        take: op.take.toString(),
        cost: entry.costUnits.toString(),
        debit: true,
        id: op.id,
        created_at: createdAt,
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
    const hasGrants = ops.some((op) => op.op === 'grant');
    const hasMoves = !hasGrants || ops.some((op) => op.op !== 'grant');
    const { defaultCapUnits, asyncCommit, lockRows } = this.#options;
    // Prepared once per connection: the one statement of every metering batch.
    const result = await prepared(
      sql<{ op_index: number; spent: bigint; cap: bigint; granted: bigint; holder_lost: boolean; recalled: boolean }>`
      select op_index, spent, cap, granted, holder_lost, recalled
      from gateway_apply(${JSON.stringify(rows)}::jsonb, ${defaultCapUnits}::int8, ${asyncCommit}, ${this.#clock.sqlNow()}, ${lockRows}, ${hasMoves}, ${hasGrants})`,
    ).execute(this.#db);
    const bookedAfter = hasGrants ? bookedAfterEachOp(ops) : [];
    const outcomes: Array<GrantOutcome | undefined> = new Array(ops.length);
    for (const row of result.rows)
      outcomes[row.op_index] = row.holder_lost
        ? { holderLost: true }
        : {
            granted: row.granted,
            spentUnits: row.spent,
            bookedAfterUnits: bookedAfter[row.op_index] ?? 0n,
            limitUnits: row.cap,
            holderLost: false,
            recalled: row.recalled,
          };
    return outcomes;
  }
}

/**
 * For each op of a batch, what the bookings of the same actor-day submitted after it cost: `gateway_apply` applies a
 * batch's bookings before deciding its grants, so a grant's spent already holds them.
 */
function bookedAfterEachOp(ops: readonly Op[]): bigint[] {
  const after = new Array<bigint>(ops.length);
  const running = new Map<string, bigint>();
  for (let i = ops.length - 1; i >= 0; i--) {
    const op = ops[i] as Op;
    const key = dayKeyOf(op);
    after[i] = running.get(key) ?? 0n;
    if (op.op === 'book') running.set(key, (after[i] as bigint) + op.entry.costUnits);
  }
  return after;
}
