import { type Kysely, sql } from 'kysely';
import type { MarketplaceSchema } from '../db/schema.ts';

export interface ListingEarnings {
  listing_id: string;
  /** Captured at settlement: hold calls whose capture landed, voucher and stream calls of closed tabs. */
  earned: bigint;
  /** Spent on tabs still open (captured when they close). */
  accruing: bigint;
  paid_out: bigint;
  /** Payouts requested and not yet confirmed by settlement. */
  pending: bigint;
}

/**
 * What each of an owner's listings has earned and been paid. Only money already captured at settlement counts as
 * earned: the marketplace pays out what it holds, never what a caller might still dispute or get back.
 */
export async function earningsOf(db: Kysely<MarketplaceSchema>, listingIds: readonly string[]): Promise<Map<string, ListingEarnings>> {
  const result = new Map<string, ListingEarnings>();
  if (listingIds.length === 0) return result;
  for (const id of listingIds) result.set(id, { listing_id: id, earned: 0n, accruing: 0n, paid_out: 0n, pending: 0n });
  const calls = await db
    .selectFrom('invocations as i')
    .leftJoin('tabs as t', 't.id', 'i.channel_id')
    .select([
      'i.listing_id',
      // A tab closed with seq 0 had lost its hold first: nothing of it was captured.
      sql<string>`coalesce(sum(i.cost_micros) filter (where (i.rail = 'hold' and i.capture_seq is not null) or (t.status = 'closed' and t.capture_seq > 0)), 0)`.as(
        'earned',
      ),
      sql<string>`coalesce(sum(i.cost_micros) filter (where i.rail <> 'hold' and t.status <> 'closed'), 0)`.as('accruing'),
    ])
    .where('i.listing_id', 'in', listingIds)
    .where('i.cost_micros', '>', 0n)
    .groupBy('i.listing_id')
    .execute();
  for (const row of calls) {
    const entry = result.get(row.listing_id) as ListingEarnings;
    entry.earned = BigInt(row.earned);
    entry.accruing = BigInt(row.accruing);
  }
  const payouts = await db
    .selectFrom('payouts')
    .select([
      'listing_id',
      sql<string>`coalesce(sum(amount_micros) filter (where status = 'paid'), 0)`.as('paid'),
      sql<string>`coalesce(sum(amount_micros) filter (where status = 'pending'), 0)`.as('pending'),
    ])
    .where('listing_id', 'in', listingIds)
    .groupBy('listing_id')
    .execute();
  for (const row of payouts) {
    const entry = result.get(row.listing_id) as ListingEarnings;
    entry.paid_out = BigInt(row.paid);
    entry.pending = BigInt(row.pending);
  }
  return result;
}

export const availableOf = (earnings: ListingEarnings): bigint => earnings.earned - earnings.paid_out - earnings.pending;
