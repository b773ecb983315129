import { type Kysely, sql } from 'kysely';
import type { InvocationTable, MarketplaceSchema } from '../db/schema.ts';
import { addToListingStats } from './listing-stats.ts';

type Db = Kysely<MarketplaceSchema>;

export type ClaimResult = { claimed: true } | { claimed: false; existing: InvocationTable };

/** What finishing an invocation adds to its listing's measured stats. */
export interface StatsDelta {
  success: boolean;
  /** Whether the provider is to blame for a failure (a caller's mistake does not count against it). */
  providerFailure: boolean;
  latencyMs: number;
}

/** The invocations table: claimed before anything moves, finished once, read by callers and dashboards. */
export class InvocationsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Claims the caller's idempotency key with a pending invocation. Of racing requests with one key exactly one
   * claims it; the others get the existing row (the unique index decides, on both engines).
   */
  async claim(row: InvocationTable): Promise<ClaimResult> {
    const inserted = await this.#db
      .insertInto('invocations')
      .values(serialise(row) as never)
      .onConflict((conflict) => conflict.columns(['caller_did', 'idempotency_key']).where('idempotency_key', '<>', '').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { claimed: true };
    const existing = await this.byKey(row.caller_did, row.idempotency_key);
    if (!existing) throw new Error('an idempotency key was claimed and then vanished');
    return { claimed: false, existing };
  }

  /** Forgets a claim whose payment never happened, so the caller may try again with the same key. */
  async forget(id: string): Promise<void> {
    await this.#db.deleteFrom('invocations').where('id', '=', id).where('status', '=', 'pending').execute();
  }

  /** Finishes an invocation and adds it to its listing's stats, in one statement. */
  async finish(id: string, changes: Partial<InvocationTable>, stats: StatsDelta): Promise<void> {
    const set = serialise(changes as InvocationTable);
    const success = stats.success ? 1 : 0;
    const failure = !stats.success && stats.providerFailure ? 1 : 0;
    const counted = success + failure;
    await sql`
      with finished as (
        update invocations set ${sql.join(
          Object.entries(set).map(([column, value]) => sql`${sql.ref(column)} = ${value}`),
          sql`, `,
        )}
        where id = ${id}
        returning listing_id, finished_at
      )
      insert into listing_stats (listing_id, calls, successes, failures, latency_ms_total, last_call_at)
      select listing_id, ${counted}, ${success}, ${failure}, ${counted === 1 ? stats.latencyMs : 0}, finished_at from finished
      ${addToListingStats}`.execute(this.#db);
  }

  /** Notes how the call's hold ended: the settlement seq, and what was captured (less than the cost if the hold had ended first). */
  async setSettled(id: string, seq: bigint, captured: bigint): Promise<void> {
    await this.#db.updateTable('invocations').set({ capture_seq: seq, cost_micros: captured }).where('id', '=', id).execute();
  }

  async saveReceipt(id: string, receipt: unknown): Promise<void> {
    await this.#db
      .updateTable('invocations')
      .set({ receipt: JSON.stringify(receipt) as never })
      .where('id', '=', id)
      .execute();
  }

  byKey(caller: string, key: string): Promise<InvocationTable | undefined> {
    return this.#db.selectFrom('invocations').selectAll().where('caller_did', '=', caller).where('idempotency_key', '=', key).executeTakeFirst();
  }

  get(id: string): Promise<InvocationTable | undefined> {
    return this.#db.selectFrom('invocations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Hold-rail invocations left open: finished with a hold not yet settled, or still pending past `before` (a call
   * interrupted mid-way; its hold, placed but not yet noted, returns to the caller when it expires).
   */
  unsettled(before: Date, limit: number): Promise<InvocationTable[]> {
    return this.#db
      .selectFrom('invocations')
      .selectAll()
      .where('rail', '=', 'hold')
      .where('capture_seq', 'is', null)
      .where((eb) =>
        eb.or([eb.and([eb('status', '<>', 'pending'), eb('hold_id', 'is not', null)]), eb.and([eb('status', '=', 'pending'), eb('started_at', '<', before)])]),
      )
      .orderBy('started_at')
      .limit(limit)
      .execute();
  }
}

/** jsonb columns go in as JSON text; everything else as it is. */
function serialise(row: Partial<InvocationTable>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    if (value === undefined) continue;
    out[column] = (column === 'response' || column === 'error' || column === 'receipt') && value !== null ? JSON.stringify(value) : value;
  }
  return out;
}

type InvocationBasics = Pick<
  InvocationTable,
  'id' | 'listing_id' | 'operation' | 'caller_did' | 'idempotency_key' | 'request_hash' | 'rail' | 'cap_micros' | 'request_digest' | 'started_at'
>;

/** A new invocation: pending, nothing spent, nothing answered yet, unless `fields` says otherwise. */
export function newInvocation(fields: InvocationBasics & Partial<InvocationTable>): InvocationTable {
  return {
    quote_id: null,
    status: 'pending',
    cost_micros: 0n,
    units: 0n,
    hold_id: null,
    channel_id: null,
    capture_seq: null,
    response_digest: null,
    response: null,
    error: null,
    latency_ms: null,
    finished_at: null,
    receipt: null,
    tab_sequence: null,
    ...fields,
  };
}
