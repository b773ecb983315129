import { formatAmount } from '@platform/kit/money';
import { type Kysely, sql } from 'kysely';
import type { ListingStatsTable, MarketplaceSchema } from '../db/schema.ts';
import { formatQuality, measure } from '../listings/quality.ts';

/** What `GET /v1/services/{id}/analytics` answers: invocations in a window, and the listing's measured standing. */
export interface ServiceAnalytics {
  service_id: string;
  /** The window counted: started_at in [since, until); null: unbounded on that side. */
  window: { since: string | null; until: string | null };
  invocations: { total: number; succeeded: number; failed: number; pending: number };
  /** What callers were charged in the window (captured costs; failed calls cost nothing), settlement-unit decimal. */
  revenue: string;
  /** succeeded / (succeeded + failed), rounded down to 4 places; null without a finished call. */
  success_rate: string | null;
  /** Over finished calls with a measured latency, interpolated (percentile_cont); null without one. */
  latency_ms: { p50: number | null; p95: number | null; p99: number | null; mean: number | null };
  /** The same counts and revenue per operation, busiest first (then by name). */
  by_operation: Array<{ operation: string; invocations: number; succeeded: number; failed: number; revenue: string }>;
  /** The listing's all-time measured quality and uptime, as discovery shows them. */
  quality_score: string;
  uptime_bps: number | null;
}

export interface AnalyticsWindow {
  since: Date | undefined;
  until: Date | undefined;
}

const oneDecimal = (value: number | null): number | null => (value === null ? null : Math.round(Number(value) * 10) / 10);

const windowSql = (window: AnalyticsWindow) =>
  sql`${window.since === undefined ? sql`` : sql`and started_at >= ${window.since}`} ${window.until === undefined ? sql`` : sql`and started_at < ${window.until}`}`;

/** Two aggregate passes over the listing's invocations (the (listing_id, started_at) index bounds them): totals, then per operation. */
export async function serviceAnalytics(db: Kysely<MarketplaceSchema>, listingId: string, window: AnalyticsWindow): Promise<ServiceAnalytics> {
  const { rows } = await sql<{
    succeeded: number;
    failed: number;
    pending: number;
    revenue: bigint;
    p50: number | null;
    p95: number | null;
    p99: number | null;
    mean: number | null;
  }>`
    select
      count(*) filter (where status = 'succeeded')::int as succeeded,
      count(*) filter (where status = 'failed')::int as failed,
      count(*) filter (where status = 'pending')::int as pending,
      coalesce(sum(cost_micros), 0)::bigint as revenue,
      percentile_cont(0.5) within group (order by latency_ms) filter (where status <> 'pending') as p50,
      percentile_cont(0.95) within group (order by latency_ms) filter (where status <> 'pending') as p95,
      percentile_cont(0.99) within group (order by latency_ms) filter (where status <> 'pending') as p99,
      (avg(latency_ms) filter (where status <> 'pending'))::float8 as mean
    from invocations
    where listing_id = ${listingId}::uuid ${windowSql(window)}`.execute(db);
  const row = rows[0];
  const { rows: operations } = await sql<{ operation: string; invocations: number; succeeded: number; failed: number; revenue: bigint }>`
    select operation, count(*)::int as invocations,
      count(*) filter (where status = 'succeeded')::int as succeeded,
      count(*) filter (where status = 'failed')::int as failed,
      coalesce(sum(cost_micros), 0)::bigint as revenue
    from invocations
    where listing_id = ${listingId}::uuid ${windowSql(window)}
    group by operation
    order by count(*) desc, operation`.execute(db);
  const stats = await db.selectFrom('listing_stats').selectAll().where('listing_id', '=', listingId).executeTakeFirst();
  const measured = measure(stats as ListingStatsTable | undefined);
  const succeeded = Number(row?.succeeded ?? 0);
  const failed = Number(row?.failed ?? 0);
  const pending = Number(row?.pending ?? 0);
  const finished = succeeded + failed;
  return {
    service_id: listingId,
    window: { since: window.since?.toISOString() ?? null, until: window.until?.toISOString() ?? null },
    invocations: { total: finished + pending, succeeded, failed, pending },
    revenue: formatAmount(BigInt(row?.revenue ?? 0n)),
    success_rate: finished === 0 ? null : (Math.floor((succeeded * 10_000) / finished) / 10_000).toFixed(4),
    latency_ms: {
      p50: oneDecimal(row?.p50 ?? null),
      p95: oneDecimal(row?.p95 ?? null),
      p99: oneDecimal(row?.p99 ?? null),
      mean: oneDecimal(row?.mean ?? null),
    },
    by_operation: operations.map((operation) => ({
      operation: operation.operation,
      invocations: Number(operation.invocations),
      succeeded: Number(operation.succeeded),
      failed: Number(operation.failed),
      revenue: formatAmount(BigInt(operation.revenue)),
    })),
    quality_score: formatQuality(measured.quality),
    uptime_bps: measured.uptimeBps,
  };
}
