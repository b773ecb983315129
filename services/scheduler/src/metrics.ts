import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import { type FireVerdict, fireVerdicts, type WakeFailureReason, wakeFailureReasons } from './alarms/fire-outcome.ts';

/** What the scheduler's gauges read at scrape time. */
export interface SchedulerMetricSources {
  /** Alarms due and not claimed by a live lease (AlarmsRepository.countDue). */
  alarmsDue: () => Promise<number>;
}

/** The dispatcher's counting handles: children made once, so a fire costs a few additions. */
export interface SchedulerMetrics {
  /** Observes one alarm's lateness at its claim (claim time less due time, both by the database clock), in seconds. */
  lateness(seconds: number): void;
  fired(verdict: FireVerdict): void;
  wakeFailed(reason: WakeFailureReason): void;
}

/** Lateness from a millisecond to an hour: a healthy dispatcher stays under 50 ms, a catch-up after downtime is minutes. */
const latenessBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600];

/**
 * Registers every scheduler metric (so each is in `/metrics` from the start). `sources` feeds the gauges read at
 * scrape time; without it (a caller that only lists the names) they read NaN.
 */
export function schedulerMetrics(metrics: ServiceMetrics, sources?: SchedulerMetricSources): SchedulerMetrics {
  metrics.gauge({
    name: 'scheduler_alarms_due',
    help: 'Active alarms whose due time has passed and that no dispatcher holds a live claim on (across every instance on the database)',
    async collect() {
      this.set(sources ? await sources.alarmsDue().catch(() => Number.NaN) : Number.NaN);
    },
  });
  const lateness = metrics.histogram({
    name: 'scheduler_fire_lateness_seconds',
    help: 'Fire time less due time of each attempt, in seconds: when a dispatcher claimed the alarm against when it fell due, by the database clock',
    buckets: latenessBuckets,
  });
  const fires = metrics.counter<'outcome'>({
    name: 'scheduler_fires_total',
    help: 'Wake deliveries attempted, by outcome: delivered; or failed and retrying (same occurrence later), failed (a once alarm gave up) or skipped (a cron occurrence left behind)',
    labelNames: ['outcome'],
  });
  const failures = metrics.counter<'reason'>({
    name: 'scheduler_wake_failures_total',
    help: 'Wake deliveries that failed, by reason: timeout, unreachable, http_4xx, http_5xx, http_other, error',
    labelNames: ['reason'],
  });
  // Every series from the start at 0, so a rate over it exists before the first failure.
  for (const verdict of fireVerdicts) fires.labels(verdict).inc(0);
  for (const reason of wakeFailureReasons) failures.labels(reason).inc(0);
  return {
    lateness: (seconds) => lateness.observe(seconds < 0 ? 0 : seconds),
    fired: (verdict) => fires.labels(verdict).inc(),
    wakeFailed: (reason) => failures.labels(reason).inc(),
  };
}
