import { sql } from 'kysely';

/**
 * How an insert into `listing_stats` adds to a listing's row when it exists: every measured count and total is a
 * sum, the last call the latest. Shared by the hold rail (one call) and the voucher rail's group commit (many).
 */
export const addToListingStats = sql`
  on conflict (listing_id) do update set
    calls = listing_stats.calls + excluded.calls,
    successes = listing_stats.successes + excluded.successes,
    failures = listing_stats.failures + excluded.failures,
    latency_ms_total = listing_stats.latency_ms_total + excluded.latency_ms_total,
    last_call_at = greatest(listing_stats.last_call_at, excluded.last_call_at)`;
