import type { Kysely } from 'kysely';
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

/** The channel the writer NOTIFYs after commit; the payload is the highest id written, as decimal text. */
export const eventsChannel = 'settlement_events';

/**
 * The ledger's event log is its receipts and batches, read in one order: the transfer event of receipt `seq`
 * has id `2·seq`, the anchor event of a batch ending at log size `L` has id `2·L + 1`, so an anchor follows
 * the last receipt it covers and precedes the next. Deriving the log instead of storing a copy of every
 * receipt halves what each pay writes, and ids still only grow, which is all Last-Event-ID needs.
 */
export function ledgerEvents(db: Kysely<SettlementSchema>, chain: { chainId: number; vaultAddress: string | null }): EventSource {
  return {
    async readAfter(afterId, limit) {
      // transfer 2s > afterId  ⇔  s ≥ ⌊afterId/2⌋ + 1;   anchor 2L+1 > afterId  ⇔  L ≥ ⌊(afterId+1)/2⌋
      const [receipts, batches] = await Promise.all([
        db
          .selectFrom('receipts')
          .select(['seq', 'kind', 'from_did', 'to_did', 'amount', 'ref', 'hold_id', 'at'])
          .where('seq', '>=', afterId / 2n + 1n)
          .orderBy('seq')
          .limit(limit)
          .execute(),
        db
          .selectFrom('batches')
          .select(batchSummaryColumns)
          .where('log_size', '>=', (afterId + 1n) / 2n)
          .orderBy('log_size')
          .limit(limit)
          .execute(),
      ]);
      const events: StoredEvent[] = [
        ...receipts.map((row) => ({ id: row.seq * 2n, type: 'transfer', payload: transferView(row), at: row.at })),
        ...batches.map((row) => ({ id: row.log_size * 2n + 1n, type: 'anchor', payload: batchView(row, chain), at: row.closed_at })),
      ];
      return events.sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit);
    },
    async headId() {
      const seq = await db.selectFrom('receipts').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirst();
      const size = await db.selectFrom('batches').select('log_size').orderBy('log_size', 'desc').limit(1).executeTakeFirst();
      const transfer = (seq?.seq ?? 0n) * 2n;
      const anchor = size ? size.log_size * 2n + 1n : 0n;
      return transfer > anchor ? transfer : anchor;
    },
  };
}

/** The event id of a receipt's transfer event and of a batch's anchor event (see ledgerEvents). */
export const transferEventId = (seq: bigint) => seq * 2n;
export const anchorEventId = (logSize: bigint) => logSize * 2n + 1n;
