import type { HistogramMetric, ServiceMetrics } from '@platform/kit/observability/metrics';
import { scrapedGauge } from '@platform/kit/observability/scraped-gauge';

export interface MemoryMetrics {
  /** Recall latency: from the request to the packed answer (term statistics, keyword and vector ranking). */
  readonly recall: HistogramMetric<never>;
  readonly search: HistogramMetric<never>;
  /** Where the `memory_memories` gauge reads its count at scrape time (the database). */
  readMemoriesFrom(count: () => Promise<number>): void;
}

/** The memory server's metrics, registered up front. No labels: nothing here is per owner, scope or query. */
export function memoryMetrics(metrics: ServiceMetrics): MemoryMetrics {
  const recall = metrics.histogram({
    name: 'memory_recall_duration_seconds',
    help: 'recall latency, from the request to the packed answer, failures included',
  });
  const search = metrics.histogram({
    name: 'memory_search_duration_seconds',
    help: 'search latency, from the request to the page of results, failures included',
  });
  const memories = scrapedGauge(metrics, { name: 'memory_memories', help: 'Memories held (neither superseded nor forgotten), all owners and scopes' });
  return { recall, search, readMemoriesFrom: (count) => memories.readFrom(count) };
}
