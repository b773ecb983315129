import { boundedLabel, type ServiceMetrics } from '@platform/kit/observability/metrics';
import { unitsPerCredit } from './metering/credit.ts';
import type { Slot } from './models/model-policy.ts';

/** How a call ended, from the gateway's side (the metrics' `outcome`). */
export type CallOutcome =
  /** Answered with the upstream's 2xx (a stream to its end). */
  | 'ok'
  /** Refused by the gateway before anything was sent: a model off the whitelist or unpriced, a malformed model id. */
  | 'rejected'
  /** Refused for the actor's daily budget (429 budget_exhausted). */
  | 'budget_exhausted'
  /** The gateway could not take it: overloaded, no upstream configured, its database out of reach. */
  | 'unavailable'
  /** The upstream answered a non-2xx, passed on as it came. */
  | 'upstream_refused'
  /** The upstream timed out, could not be reached, broke off or answered too much; or a stream ended on its error event. */
  | 'upstream_failed'
  /** A stream's client left before the end (the answer was drained for its usage, or charged its reservation). */
  | 'client_gone'
  | 'error';

/** What went wrong upstream (the metrics' `kind`). */
export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'too_large' | 'http_429' | 'http_4xx' | 'http_5xx' | 'http_other' | 'stream_error';

export type BudgetRefusalReason = 'daily_cap' | 'blocked';

export interface GatewayMetricSources {
  /** The model ids a label may name: the configured ones (every model a free-tier call can reach); any other is `other`. */
  models: readonly string[];
  /** Budget leases (an actor's day) this instance holds a slice of now. */
  leasesHeld: () => number;
}

/** The counting handles; each label set's child is made once and kept (the models and slots are a closed set). */
export interface GatewayMetrics {
  /** The label for a model a request named: the id when configured, else `other`. */
  model(id: string): string;
  call(model: string, slot: Slot, outcome: CallOutcome): void;
  creditsSpent(model: string, slot: Slot, units: bigint): void;
  budgetRefused(reason: BudgetRefusalReason): void;
  upstreamTime(model: string, seconds: number): void;
  upstreamError(model: string, kind: UpstreamErrorKind): void;
}

/** LLM calls take from tens of milliseconds (an embedding) to minutes (a long stream). */
const upstreamBuckets = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

/**
 * Registers every gateway metric (so each is in `/metrics` from the start). Without `sources` (a caller that only
 * lists the names) every model is `other` and the leases gauge reads NaN.
 */
export function gatewayMetrics(metrics: ServiceMetrics, sources?: GatewayMetricSources): GatewayMetrics {
  const calls = metrics.counter<'model' | 'slot' | 'outcome'>({
    name: 'gateway_calls_total',
    help: 'Chat and embedding calls by model (a configured id, or other), slot and outcome (ok, rejected, budget_exhausted, unavailable, upstream_refused, upstream_failed, client_gone, error)',
    labelNames: ['model', 'slot', 'outcome'],
  });
  const credits = metrics.counter<'model' | 'slot'>({
    name: 'gateway_credits_spent_total',
    help: 'Credits booked for metered calls, by model and slot, counted once each booking is committed',
    labelNames: ['model', 'slot'],
  });
  const refusals = metrics.counter<'reason'>({
    name: 'gateway_budget_refusals_total',
    help: 'Calls refused for the daily budget, by reason: daily_cap (spent up to the cap) or blocked (a cap of 0)',
    labelNames: ['reason'],
  });
  const upstream = metrics.histogram<'model'>({
    name: 'gateway_upstream_duration_seconds',
    help: 'Upstream exchanges from sending the request to the end of the answer (a stream’s last event), by model',
    labelNames: ['model'],
    buckets: upstreamBuckets,
  });
  const upstreamErrors = metrics.counter<'model' | 'kind'>({
    name: 'gateway_upstream_errors_total',
    help: 'Upstream failures by model and kind: timeout, unreachable, too_large, http_429, http_4xx, http_5xx, http_other, stream_error',
    labelNames: ['model', 'kind'],
  });
  metrics.gauge({
    name: 'gateway_leases_held',
    help: 'Budget leases (one actor’s day each) this instance holds a slice of',
    collect() {
      this.set(sources ? sources.leasesHeld() : Number.NaN);
    },
  });
  const models = new Set(sources?.models ?? []);
  for (const reason of ['daily_cap', 'blocked']) refusals.labels(reason).inc(0);
  const refusalChildren = { daily_cap: refusals.labels('daily_cap'), blocked: refusals.labels('blocked') };
  return {
    model: (id) => boundedLabel(id, models),
    call: (model, slot, outcome) => calls.labels(model, slot, outcome).inc(),
    creditsSpent: (model, slot, units) => credits.labels(model, slot).inc(Number(units) / Number(unitsPerCredit)),
    budgetRefused: (reason) => refusalChildren[reason].inc(),
    upstreamTime: (model, seconds) => upstream.labels(model).observe(seconds),
    upstreamError: (model, kind) => upstreamErrors.labels(model, kind).inc(),
  };
}
