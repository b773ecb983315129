import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { SettlementSchema } from '../db/schema.ts';
import { batchSummaryColumns, batchView, transferView } from '../ledger/views.ts';

export interface StoredEvent {
  id: bigint;
  type: string;
  payload: unknown;
  at: Date;
}

/** Where the hub reads the ordered log: events above an id, oldest first, and the current end. */
export interface EventSource {
  readAfter(afterId: bigint, limit: number): Promise<StoredEvent[]>;
  headId(): Promise<bigint>;
}

/**
 * The channel the writer NOTIFYs after commit; the payload is the highest id written, as decimal text. Scoped to the
 * schema (kit `notify`): the hub trusts the payload as its live position, so it must come from this ledger alone.
 */
export const eventsChannel = 'settlement_events';

/** Ids per receipt from the cutover on: the transfer's, then room for the anchors written right after it. */
const idsPerReceipt = 16n;

/**
 * The ids of the ledger's events. The log is the receipts and batches, read in the order they were committed:
 * the transfer event of receipt `seq` is derived from the seq, and a batch's anchor event takes the next free id
 * after the receipts committed before it (stored with the batch: a batch is built in the background and written
 * in order with the group commits, so it may follow receipts past its own log size). Ids therefore grow in commit
 * order, which is what lets a live reader read "everything after my position" and never skip a late row.
 *
 * Receipts up to `legacySeq` (the last one when this scheme was introduced) keep the first scheme's `2·seq`, and
 * batches written before it their `2·log_size + 1`, so a client's saved Last-Event-ID still means the same event.
 * Later receipts are spaced `idsPerReceipt` apart, so that several batches written with no receipt between them
 * (a close right after the previous batch landed, on an idle ledger) each have an id of their own.
 */
export class EventIds {
  readonly #legacySeq: bigint;

  constructor(legacySeq: bigint) {
    this.#legacySeq = legacySeq;
  }

  /** The transfer event id of receipt `seq` (0 for seq 0: the start of the log). */
  transfer(seq: bigint): bigint {
    const legacy = this.#legacySeq;
    return seq <= legacy ? seq * 2n : legacy * 2n + (seq - legacy) * idsPerReceipt;
  }

  /** The first seq whose transfer event id is above `id`. */
  firstSeqAfter(id: bigint): bigint {
    const legacy = this.#legacySeq;
    return id < legacy * 2n ? id / 2n + 1n : legacy + (id - legacy * 2n) / idsPerReceipt + 1n;
  }

  /**
   * The id of an anchor written right after receipt `position`, when the last anchor written so far has
   * `lastAnchor` (0 for none). Throws when the room after that receipt is used up (not reachable: every close
   * needs a receipt after the previous batch's close, so at most two batches land after the same receipt).
   */
  anchor(position: bigint, lastAnchor: bigint): bigint {
    const base = this.transfer(position);
    const id = (lastAnchor > base ? lastAnchor : base) + 1n;
    if (id >= this.transfer(position + 1n)) throw new Error(`no event id left for another anchor after receipt ${position}`);
    return id;
  }
}

/** Reads the scheme's cutover, written once by the migration. */
export async function readEventIds(db: Kysely<SettlementSchema>): Promise<EventIds> {
  const row = await db.selectFrom('event_ids').select('legacy_seq').executeTakeFirstOrThrow();
  return new EventIds(BigInt(row.legacy_seq));
}

/**
 * The ledger's event log (see EventIds). Both tables are read in one snapshot: read apart, a batch committed
 * between the two reads could be missed while receipts after it are returned, and the reader's position would
 * pass it for good.
 */
export function ledgerEvents(db: Kysely<SettlementSchema>, chain: { chainId: number; vaultAddress: string | null }): EventSource {
  let ids: Promise<EventIds> | undefined;
  const eventIds = () => {
    ids ??= readEventIds(db).catch((error: unknown) => {
      ids = undefined;
      throw error;
    });
    return ids;
  };
  return {
    async readAfter(afterId, limit) {
      const scheme = await eventIds();
      const [receipts, batches] = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => [
          await trx
            .selectFrom('receipts')
            .select(['seq', 'kind', 'from_did', 'to_did', 'amount', 'ref', 'hold_id', 'at'])
            .where('seq', '>=', scheme.firstSeqAfter(afterId))
            .orderBy('seq')
            .limit(limit)
            .execute(),
          await trx
            .selectFrom('batches')
            .select([...batchSummaryColumns, 'event_id'])
            .where('event_id', '>', afterId)
            .orderBy('event_id')
            .limit(limit)
            .execute(),
        ]);
      const events: StoredEvent[] = [
        ...receipts.map((row) => ({ id: scheme.transfer(row.seq), type: 'transfer', payload: transferView(row), at: row.at })),
        ...batches.map(({ event_id, ...row }) => ({ id: event_id, type: 'anchor', payload: batchView(row, chain), at: row.closed_at })),
      ];
      return events.sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit);
    },
    async headId() {
      const scheme = await eventIds();
      // One statement, one snapshot (as above).
      const { rows } = await sql<{ seq: string | null; anchor: string | null }>`
        select (select max(seq) from receipts) as seq, (select max(event_id) from batches) as anchor`.execute(db);
      const transfer = scheme.transfer(BigInt(rows[0]?.seq ?? 0));
      const anchor = BigInt(rows[0]?.anchor ?? 0);
      return transfer > anchor ? transfer : anchor;
    },
  };
}
