import { type Kysely, sql } from 'kysely';
import type { SettlementSchema } from '../db/schema.ts';

/**
 * The one narrow door to chain 125. Until the chain issue lands nothing is sent: the ledger records what it
 * would send (anchors of closed batches, payouts of withdrawals) in `chain_outbox`, in the same transaction
 * as the movement, and this object answers the questions the reads need. The chain issue replaces
 * `reserveMicros` with the vault's on-chain balance and adds a broadcaster that drains the outbox.
 */
export interface SettlementChain {
  readonly chainId: number;
  readonly vaultAddress: string | null;
  readonly anchorAddress: string | null;
  /** The reserve the vault holds for the ledger, in micros. */
  reserveMicros(db: Kysely<SettlementSchema>): Promise<bigint>;
}

/**
 * Today's chain: the reserve is every credited deposit minus every withdrawal, which is what the vault holds
 * once the recorded payouts are sent. The faucet records itself as a deposit, so it counts too.
 */
export function recordingChain(settings: { chainId: number; vaultAddress: string | null; anchorAddress: string | null }): SettlementChain {
  return {
    ...settings,
    async reserveMicros(db) {
      const { rows } = await sql<{ reserve: bigint }>`
        select (select coalesce(sum(amount), 0) from deposits)::bigint - (select coalesce(sum(amount), 0) from withdrawals)::bigint as reserve`.execute(db);
      return rows[0]?.reserve ?? 0n;
    },
  };
}
