import { type RawBuilder, sql } from 'kysely';
import { qualityPriorRate } from '../listings/quality.ts';

/**
 * The discovery ranking, in one place. Every term is in [0, 1], so the score is too:
 *
 *   with a query:  score = 0.55·T + 0.25·Q + 0.10·R + 0.10·P
 *   browsing:      score = (0.25·Q + 0.10·R + 0.10·P) / 0.45        (no text term; the rest keeps its proportions)
 *
 * - T, text relevance: `ts_rank(search, query)` over the listing's name, summary, tags and operations (the `search`
 *   tsvector), divided by the best rank among the listings that passed the filters, so the best match has T = 1.
 *   A listing matches when it holds most of the query's lexemes (n − ⌊n/3⌋ of n; any one of them only if nothing
 *   holds most: `discovery/text-query.ts`); the rank is taken against all of them OR-ed, so ts_rank rewards a
 *   listing for each one it holds.
 * - Q, measured quality: `listings/quality.ts` (success rate with a 10-call prior of 0.5, times 1 / (1 + mean
 *   latency / 2 s)), from listing_stats, which only real invocations write; never from the manifest.
 * - R, measured reliability: the same smoothed success rate without the latency factor, so a listing that fails
 *   is penalised twice (a failure wastes the caller's time as well as the call) while latency only once.
 * - P, price: 1 / (1 + log10(1 + cheapest price per unit in micros / 1000)). Log-scaled because prices span
 *   orders of magnitude: 0.000001 → 1.00, 0.001 → 0.77, 0.01 → 0.50, 1.00 → 0.25. Cheaper is better at equal
 *   everything else; a listing without a price gets 0.
 *
 * The score is rounded to 6 places in SQL as an integer count of millionths, `floor(score × 10^6 + 0.5)` in float8
 * (integers that small are exact in a double, so equality is exact; rounding through numeric cost a third of a
 * browse over 10,000 listings), and shown as the decimal string of that count; ties break by id (creation
 * order). Order and cursor both use the rounded integer, so pages compare exactly what they show.
 */
export const weights = { text: 0.55, quality: 0.25, reliability: 0.1, price: 0.1 } as const;
export const priceScaleMicros = 1000;
export const scorePlaces = 6;

const lit = (value: number) => sql.lit(value);

/*
 * Aliases: `l` listings, `s` listing_stats (left-joined: a listing never called has no row, and then has the
 * prior's 0.5 for both Q and R, as `measure(undefined)` does). Q, R and uptime_bps are listing_stats' generated
 * columns (`discovery/ranking-migration.ts`).
 */
/** R: the smoothed success rate. */
export const reliabilitySql = sql<number>`coalesce(s.reliability, ${lit(qualityPriorRate)})`;
/** Q: equal, bit for bit, to `measure(stats).quality`. */
export const qualitySql = sql<number>`coalesce(s.quality, ${lit(qualityPriorRate)})`;
/** `floor(Q × 1000 + 0.5)`: what `quality_score` shows, as an integer (the min_quality filter compares it). */
export const qualityThousandthsSql = sql<number>`floor(${qualitySql} * 1000 + 0.5)`;
/** uptime_bps: null before the first call. */
export const uptimeBpsSql = sql<number | null>`s.uptime_bps`;
export const priceSql = sql<number>`(case when l.cheapest_price_micros is null then 0
  else 1 / (1 + log(1 + l.cheapest_price_micros::float8 / ${lit(priceScaleMicros)})) end)`;

/** Over the columns the ranked subquery selects (`r.quality`, `r.reliability`, `r.price`, `r.text_rank`, `r.best_text`). */
const statsPart = sql`(${lit(weights.quality)} * r.quality + ${lit(weights.reliability)} * r.reliability + ${lit(weights.price)} * r.price)`;

/** The score of browsing (no query): float8. */
export const browseScoreSql = sql<number>`(${statsPart} / ${lit(weights.quality + weights.reliability + weights.price)})`;

/** The score with a query: the text rank relative to the best of the result set, then the stats. */
export const searchScoreSql = sql<number>`(${lit(weights.text)} * coalesce(r.text_rank / nullif(r.best_text, 0), 0) + ${statsPart})`;

/** The score as shown and compared: millionths, an integer-valued float8. */
export const roundedScore = (score: RawBuilder<number>) => sql<number>`floor((${score}) * ${lit(10 ** scorePlaces)} + 0.5)`;

/** Millionths as the decimal string shown: 912345 → "0.912345". */
export function formatScore(millionths: number): string {
  const scale = 10 ** scorePlaces;
  return `${Math.floor(millionths / scale)}.${String(millionths % scale).padStart(scorePlaces, '0')}`;
}

/** The price term in TS, for tests and documentation examples. */
export const priceTerm = (micros: number): number => 1 / (1 + Math.log10(1 + micros / priceScaleMicros));
