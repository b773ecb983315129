import type { Kysely } from 'kysely';
import type { SettlementSchema } from '../db/schema.ts';
import { ReceiptLogCache } from '../receipts/log-cache.ts';

/** Leaves read per query while catching up: bounded memory per round trip. */
const pageSize = 50_000;

/**
 * This process's copy of the receipt log (leaf hashes and complete subtrees, about 64 bytes per receipt),
 * so roots and proofs cost O(log n). The sequencer appends what it has just committed; a standby (or a
 * reader that finds a gap) catches up from the receipts table. Both paths append a leaf only when it is
 * the next one, so they can interleave without a lock.
 */
export class LogView {
  readonly cache = new ReceiptLogCache();

  get size(): number {
    return this.cache.size;
  }

  /** Appends leaves starting at `firstSeq` that extend the log; ones already present are skipped. */
  appendFrom(firstSeq: number, hashes: readonly Buffer[]): void {
    for (let i = 0; i < hashes.length; i++) {
      const seq = firstSeq + i;
      if (seq <= this.cache.size) continue;
      if (seq !== this.cache.size + 1) return;
      this.cache.append(hashes[i] as Buffer);
    }
  }

  /** Makes sure the first `size` leaves are here, reading the missing ones from the database. */
  async ensure(db: Kysely<SettlementSchema>, size: number): Promise<void> {
    while (this.cache.size < size) {
      const from = this.cache.size + 1;
      const rows = await db
        .selectFrom('receipts')
        .select(['seq', 'leaf_hash'])
        .where('seq', '>=', BigInt(from))
        .where('seq', '<=', BigInt(Math.min(size, from + pageSize - 1)))
        .orderBy('seq')
        .execute();
      if (rows.length === 0 || Number(rows[0]?.seq) !== from) throw new Error(`receipt log has no leaf ${from}`);
      this.appendFrom(
        from,
        rows.map((row) => row.leaf_hash),
      );
    }
  }
}
