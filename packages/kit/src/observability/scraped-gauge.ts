import type { Gauge } from 'prom-client';
import type { MetricConfig, ServiceMetrics } from './metrics.ts';

/** A gauge read at scrape time from a source given later: the component that can count opens after the metrics exist. */
export interface ScrapedGauge {
  readonly gauge: Gauge;
  /** Where the gauge reads its value at each scrape (a cheap database count); until set, it reads 0. */
  readFrom(source: () => Promise<number>): void;
}

const sources = new WeakMap<Gauge, () => Promise<number>>();

/**
 * A gauge whose value a source reads at each scrape. A source that fails (the database does not answer) leaves the
 * last value rather than failing the scrape: every other metric is still served, and `db_query_duration_seconds`
 * with `outcome="error"` says why. Made twice over one registry, the second `readFrom` wins.
 *
 * @example const memories = scrapedGauge(metrics, { name: 'memory_memories', help: '…' }); memories.readFrom(() => store.count())
 */
export function scrapedGauge(metrics: ServiceMetrics, config: MetricConfig<never>): ScrapedGauge {
  const gauge = metrics.gauge({
    ...config,
    // A source that throws leaves the last value: every gauge's collect is lenient (metrics.ts).
    async collect() {
      const value = await sources.get(this)?.();
      if (value !== undefined) this.set(value);
    },
  });
  return { gauge, readFrom: (source) => sources.set(gauge, source) };
}
