import { type ServiceMetrics, setCounts } from '@platform/kit/observability/metrics';
import type { IntentStatus } from './intents/intent-state.ts';

const intentStatuses: readonly IntentStatus[] = ['drafting', 'planning', 'executing', 'completed', 'failed', 'cancelled'];

/** What the daemon's gauges read at scrape time. */
export interface DaemonSources {
  intentsByStatus(): ReadonlyMap<string, number>;
  pendingGates(): number;
  subscribers(): number;
}

/** What the journal and the broker count as it happens. */
export interface DaemonCounters {
  journalAppended(): void;
  eventDropped(): void;
}

/**
 * The daemon's own metrics (README, Metrics), all registered here so `/metrics` lists them from the start. The gauges
 * read `sources` when scraped (the intent index and the broker are in memory: no file is read for a scrape).
 */
export function daemonMetrics(metrics: ServiceMetrics, sources: DaemonSources): DaemonCounters {
  metrics.gauge<'state'>({
    name: 'daemon_intents',
    help: 'Intents in the journal by state: drafting, planning, executing, completed, failed, cancelled',
    labelNames: ['state'],
    collect() {
      setCounts(this, 'state', intentStatuses, sources.intentsByStatus());
    },
  });
  metrics.gauge({
    name: 'daemon_gates_pending',
    help: 'Gates of unfinished intents waiting for the person’s answer',
    collect() {
      this.set(sources.pendingGates());
    },
  });
  metrics.gauge({
    name: 'daemon_sse_subscribers',
    help: 'Open event streams (GET /events), the unfiltered and the per-intent ones',
    collect() {
      this.set(sources.subscribers());
    },
  });
  const dropped = metrics.counter({
    name: 'daemon_sse_dropped_events_total',
    help: 'Events a subscriber lost because its buffer was full (a slow reader), since start',
  });
  const appends = metrics.counter({
    name: 'daemon_journal_appends_total',
    help: 'Signed envelopes written durably to the journal (an intent’s creation and every change after it), since start',
  });
  dropped.inc(0);
  appends.inc(0);
  return { journalAppended: () => appends.inc(), eventDropped: () => dropped.inc() };
}
