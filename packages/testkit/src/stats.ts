/**
 * Nearest-rank percentile of an ascending array; NaN when empty so a missing run cannot read as 0 ms.
 *
 * @example percentile([1, 2, 3, 4], 50) // 2
 */
export function percentile(sortedAsc: readonly number[], p: number): number {
  if (sortedAsc.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAsc.length);
  return sortedAsc[Math.min(sortedAsc.length, Math.max(1, rank)) - 1] as number;
}

const ascending = (values: readonly number[]): number[] => values.slice().sort((a, b) => a - b);

/** Median of unsorted values (nearest rank); NaN when empty. @example p50([30, 10, 20]) // 20 */
export const p50 = (values: readonly number[]): number => percentile(ascending(values), 50);

/** 99th percentile of unsorted values (nearest rank); NaN when empty. @example p99(latencies) */
export const p99 = (values: readonly number[]): number => percentile(ascending(values), 99);

/**
 * The largest value; NaN when empty. A loop, not Math.max(...values): spreading 100k+ arguments overflows the call stack.
 *
 * @example max(latencies)
 */
export function max(values: readonly number[]): number {
  let top = Number.NaN;
  for (const v of values) if (Number.isNaN(top) || v > top) top = v;
  return top;
}
