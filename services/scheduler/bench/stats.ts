export interface Summary {
  firesPerSecond: number;
  /** Lateness percentiles in ms (receive time minus scheduled_for). */
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array; NaN when empty so a missing run cannot read as 0 ms. */
export function percentile(sortedAsc: readonly number[], p: number): number {
  if (sortedAsc.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAsc.length);
  return sortedAsc[Math.min(sortedAsc.length, Math.max(1, rank)) - 1] as number;
}

const ascending = (values: readonly number[]): number[] => values.slice().sort((a, b) => a - b);

export const p50 = (values: readonly number[]): number => percentile(ascending(values), 50);
export const p99 = (values: readonly number[]): number => percentile(ascending(values), 99);
/** A loop, not Math.max(...values): spreading 100k+ arguments overflows the call stack. */
export function max(values: readonly number[]): number {
  let top = Number.NaN;
  for (const v of values) if (Number.isNaN(top) || v > top) top = v;
  return top;
}

/**
 * firesPerSecond = count / ((lastReceiveMs - firstScheduledMs) / 1000)
 *
 * The window opens when the first job falls due, not when it was inserted, so insert time and the
 * idle wait before the due moment are excluded, while detection delay (poll interval) and dispatch
 * time are included. With a spread the window cannot be shorter than the spread, so fires/s is then
 * bounded by the arrival rate (count / spread) and lateness is the figure that matters.
 */
export function summarize(latenesses: readonly number[], firstScheduledMs: number, lastReceiveMs: number, count: number): Summary {
  const sorted = ascending(latenesses);
  // Clamp to 1 ms so a degenerate window cannot divide by zero or go negative.
  const windowMs = Math.max(1, lastReceiveMs - firstScheduledMs);
  return {
    firesPerSecond: count / (windowMs / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}
