import type { Clock } from '@platform/kit/clock';
import { type Kysely, sql } from 'kysely';
import type { SettlementChain } from '../chain/settlement-chain.ts';
import type { SettlementSchema } from '../db/schema.ts';
import type { SettlementReadings } from '../metrics.ts';

/**
 * The gauges' figures, read once per scrape: supply and reserve as `/v1/supply` answers them (the vault's figures on
 * a live chain), then one statement for the anchors and withdrawals (the unpaid ones through their partial index; the
 * batches as the chain loop reads them every pass), and what the chain side knows of deposits and anchor blocks.
 */
export async function readSettlementGauges(db: Kysely<SettlementSchema>, chain: SettlementChain, clock: Clock): Promise<SettlementReadings> {
  const [supply, rows, onChain] = await Promise.all([
    chain.supply(),
    sql<{ oldest_unanchored: Date | string | null; withdrawals_pending: number }>`
      select
        (select closed_at from batches where anchor_status <> 'confirmed' order by number limit 1) as oldest_unanchored,
        (select count(*)::int from withdrawals where status <> 'confirmed') as withdrawals_pending`.execute(db),
    chain.gauges(),
  ]);
  const row = rows.rows[0] as { oldest_unanchored: Date | string | null; withdrawals_pending: number };
  const oldest = row.oldest_unanchored === null ? undefined : new Date(row.oldest_unanchored).getTime();
  return {
    supply: Number(supply.supply),
    reserve: Number(supply.reserve),
    fullyReserved: supply.fully_reserved,
    // Without a chain a batch is only recorded: nothing is anchored, so there is no lag to speak of.
    anchorLagSeconds: !chain.live ? Number.NaN : oldest === undefined ? 0 : Math.max(0, (clock.now().getTime() - oldest) / 1000),
    anchorLagBlocks: onChain.anchorLagBlocks,
    depositsAwaitingConfirmations: onChain.depositsAwaitingConfirmations,
    withdrawalsPending: row.withdrawals_pending,
  };
}
