import type { ListingStatsTable } from '../db/schema.ts';

/**
 * Quality and uptime, measured by the marketplace from the calls it served (never taken from a manifest).
 *
 * - `uptime_bps`: the share of calls the provider served, in basis points: successes × 10000 / (successes +
 *   failures), rounded down; null before the first call (unknown is not 100 %).
 * - `quality_score`: the success rate pulled towards a prior of 0.5 by 10 imaginary calls (a listing with one lucky
 *   call does not outrank one with a thousand good ones), times a latency factor 1 / (1 + mean latency / 2 s), as
 *   a decimal string with 3 places in [0, 1], rounded half up. A listing never called scores 0.500 × 1 = 0.500.
 *
 * Discovery computes the same numbers in SQL (`discovery/ranking.ts` builds them from these constants, in the same
 * order of float8 operations), so the `min_quality` filter and the shown `quality_score` never disagree; a test
 * holds the two to bit equality.
 */
export const qualityPriorCalls = 10;
export const qualityPriorRate = 0.5;
export const latencyScaleMs = 2000;

export interface Measured {
  quality: number;
  uptimeBps: number | null;
}

export function measure(stats: Pick<ListingStatsTable, 'successes' | 'failures' | 'latency_ms_total' | 'calls'> | undefined): Measured {
  const successes = Number(stats?.successes ?? 0n);
  const failures = Number(stats?.failures ?? 0n);
  const served = successes + failures;
  const calls = Number(stats?.calls ?? 0n);
  const meanLatency = calls > 0 ? Number(stats?.latency_ms_total ?? 0n) / calls : 0;
  const rate = (successes + qualityPriorRate * qualityPriorCalls) / (served + qualityPriorCalls);
  const quality = rate / (1 + meanLatency / latencyScaleMs);
  return { quality, uptimeBps: served === 0 ? null : Math.floor((successes * 10_000) / served) };
}

/** Quality in thousandths, rounded half up: `floor(q × 1000 + 0.5)`, written so SQL can compute the same integer. */
export const qualityThousandths = (quality: number): number => Math.floor(quality * 1000 + 0.5);

export const formatQuality = (quality: number): string => (qualityThousandths(quality) / 1000).toFixed(3);
