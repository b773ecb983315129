import type { Kysely } from 'kysely';
import type { InvocationTable, MarketplaceSchema } from '../db/schema.ts';

type Db = Kysely<MarketplaceSchema>;

/** The invocations table's reads and single-row changes (claims and outcomes go through the call ledger's group commit). */
export class InvocationsRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Forgets a claim whose payment never happened, so the caller may try again with the same key. */
  async forget(id: string): Promise<void> {
    await this.#db.deleteFrom('invocations').where('id', '=', id).where('status', '=', 'pending').execute();
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
