import { boundedLabel, byValue, type ServiceMetrics, setCounts } from '@platform/kit/observability/metrics';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DeploymentStatus, InvocationTable, MarketplaceSchema, PaymentRail } from './db/schema.ts';

const rails: readonly PaymentRail[] = ['hold', 'voucher', 'stream'];
/** How a call ended: served, a provider's failure (provider-call.ts), interrupted by a stop (the sweep), or its hold refused. */
const outcomes = ['succeeded', 'provider_timeout', 'provider_error', 'provider_unreachable', 'provider_bad_answer', 'interrupted', 'payment_refused'] as const;
type Outcome = (typeof outcomes)[number];
const knownOutcomes: ReadonlySet<string> = new Set(outcomes);
const phases: readonly DeploymentStatus[] = ['build', 'deploy', 'running', 'failed', 'stopped'];
/** Where a provider runs: the developer's own server, or a hosted Worker the marketplace runs. */
export type Hosting = 'external' | 'hosted';

/** What the payments and the sweep count (payments.ts wires them). */
export interface MarketplaceMetrics {
  /** A call's outcome, once written (the call ledger's group committed it). */
  finished(invocation: Pick<InvocationTable, 'rail' | 'status' | 'error'>): void;
  /** A paid call whose hold settlement refused: nothing was served. */
  holdRefused(): void;
  /** The provider answered (or failed) after `seconds`. */
  providerAnswered(hosting: Hosting, seconds: number): void;
  /** A call's hold placed, and later captured or released (or left to the sweep). */
  holdPlaced(): void;
  holdClosed(): void;
  /** Holds of finished calls the sweep found open and could not settle on its last pass. */
  sweepLeftOpen(holds: number): void;
}

/**
 * The marketplace's own metrics (README, Metrics), all registered here so `/metrics` lists them from the start. The
 * gauges that read the database do it when scraped, with one grouped count each over small tables (tabs and
 * deployments), never the invocations table.
 */
export function marketplaceMetrics(metrics: ServiceMetrics, db: Kysely<MarketplaceSchema>): MarketplaceMetrics {
  const invocations = metrics.counter<'outcome' | 'rail'>({
    name: 'marketplace_invocations_total',
    help: 'Calls by outcome (succeeded, provider_timeout, provider_error, provider_unreachable, provider_bad_answer, interrupted, payment_refused) and rail (hold, voucher, stream)',
    labelNames: ['outcome', 'rail'],
  });
  const providerDuration = metrics.histogram<'hosting'>({
    name: 'marketplace_provider_duration_seconds',
    help: 'Provider calls from sending to the answer (or the failure), by hosting: external (the developer’s server) or hosted (a Worker the marketplace runs)',
    labelNames: ['hosting'],
  });
  const held = { calls: 0, leftToSweep: 0 };
  metrics.gauge<'rail'>({
    name: 'marketplace_holds_open',
    help: 'Settlement holds the marketplace placed and has not captured or released, by rail: hold (calls being served here, and finished calls the sweep has still to settle), voucher and stream (open tabs, one hold each)',
    labelNames: ['rail'],
    async collect() {
      const tabs = await counts(db, sql`select kind as key, count(*)::int as count from tabs where status <> 'closed' group by kind`);
      const counted = new Map([
        ['hold', held.calls + held.leftToSweep],
        ['voucher', tabs.get('channel') ?? 0],
        ['stream', tabs.get('stream') ?? 0],
      ]);
      setCounts(this, 'rail', rails, counted);
    },
  });
  metrics.gauge<'phase'>({
    name: 'marketplace_deployments',
    help: 'Hosted deployments by phase: build, deploy, running, failed, stopped (the database, the same on every instance)',
    labelNames: ['phase'],
    async collect() {
      setCounts(this, 'phase', phases, await counts(db, sql`select status as key, count(*)::int as count from hosted_deployments group by status`));
    },
  });
  for (const rail of rails) for (const outcome of outcomes) invocations.inc({ outcome, rail }, 0);
  const answered = byValue(['external', 'hosted'] as const, (hosting) => {
    providerDuration.zero({ hosting });
    return providerDuration.labels(hosting);
  });
  return {
    finished(invocation) {
      const reason = (invocation.error as { reason?: unknown } | null)?.reason;
      const outcome: Outcome | 'other' = invocation.status === 'succeeded' ? 'succeeded' : boundedLabel(String(reason), knownOutcomes as ReadonlySet<Outcome>);
      invocations.inc({ outcome, rail: invocation.rail });
    },
    holdRefused: () => invocations.inc({ outcome: 'payment_refused', rail: 'hold' }),
    providerAnswered: (hosting, seconds) => answered[hosting].observe(seconds),
    holdPlaced: () => {
      held.calls++;
    },
    holdClosed: () => {
      held.calls--;
    },
    sweepLeftOpen: (holds) => {
      held.leftToSweep = holds;
    },
  };
}

/** A grouped count (`select <key> as key, count(*)::int as count … group by <key>`) as a map. */
async function counts(db: Kysely<MarketplaceSchema>, query: RawBuilder<{ key: string; count: number }>): Promise<Map<string, number>> {
  const { rows } = await query.execute(db);
  return new Map(rows.map((row) => [row.key, Number(row.count)]));
}
