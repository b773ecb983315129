import { byValue, type ServiceMetrics, setCounts } from '@platform/kit/observability/metrics';
import { userStates } from './db/schema.ts';

/** How a wake of an environment ended: ready (its daemon answered the probe), the provider failed, or the deadline passed. */
export type WakeOutcome = 'ready' | 'failed' | 'timeout';
const wakeOutcomes: readonly WakeOutcome[] = ['ready', 'failed', 'timeout'];

/** Where the proxy streams a request: a closed set, the route's prefix (proxy-route.ts), never the address. */
export type ProxyTarget = 'daemon' | 'cody' | 'gateway' | 'settlement' | 'marketplace';
const proxyTargets: readonly ProxyTarget[] = ['daemon', 'cody', 'gateway', 'settlement', 'marketplace'];

/** How `POST /internal/wake` answered the scheduler (wake-route.ts). */
export type WakeDeliveryOutcome = 'accepted' | 'duplicate' | 'checked' | 'refused' | 'failed';
const deliveryOutcomes: readonly WakeDeliveryOutcome[] = ['accepted', 'duplicate', 'checked', 'refused', 'failed'];

/** The account states (the database's) and, of the active ones, this instance's environments running and waking. */
const environmentStates = [...userStates, 'running', 'waking'] as const;

/** What the environment gauges read at scrape time. */
export interface EnvironmentSources {
  countByState(): Promise<ReadonlyMap<string, number>>;
  running(): number;
  /** Wakes under way and the requests waiting for one (or for a first provisioning). */
  waiting(): { flights: number; waiters: number };
}

/** What the wake coordinator counts. */
export interface WakeMetrics {
  woke(outcome: WakeOutcome, durationMs: number): void;
}

/** What the proxy times per exchange: the upstream's answer (its headers) or its failure before answering. */
export interface ProxyTiming {
  answered(seconds: number): void;
  failed(): void;
}

export interface RouterMetrics {
  wakes: WakeMetrics;
  proxy: Record<ProxyTarget, ProxyTiming>;
  delivered(outcome: WakeDeliveryOutcome): void;
}

/**
 * The router's own metrics (README, Metrics), every one registered here so `/metrics` lists them from the start; the
 * gauges read `sources` when scraped, the counters are counted where the event happens. Label values are the closed
 * sets above.
 */
export function routerMetrics(metrics: ServiceMetrics, sources: EnvironmentSources): RouterMetrics {
  const wakes = metrics.counter<'outcome'>({
    name: 'router_wakes_total',
    help: 'Wakes of a sleeping environment (one per single-flight wake, however many requests joined it), by outcome: ready, failed, timeout',
    labelNames: ['outcome'],
  });
  const wakeDuration = metrics.histogram({
    name: 'router_wake_duration_seconds',
    help: 'How long a wake took, from asking the provider to start the environment to its daemon answering the health probe (wakes that became ready)',
    buckets: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 2, 5, 10, 20, 30, 60],
  });
  const coldStarts = metrics.counter({
    name: 'router_cold_starts_total',
    help: 'Cold starts: wakes whose environment became ready (the internal /healthz cold_starts.count)',
  });
  metrics.gauge({
    name: 'router_waiters',
    help: 'Requests waiting for their environment: for a wake, or for the first provisioning their own request began',
    collect() {
      this.set(sources.waiting().waiters);
    },
  });
  metrics.gauge<'state'>({
    name: 'router_environments',
    help: 'Users by account state (provisioning, active, suspended, deleted: the database, the same on every instance), and the environments this instance runs (running) and is waking (waking)',
    labelNames: ['state'],
    async collect() {
      const counts = new Map<string, number>(await sources.countByState());
      counts.set('running', sources.running());
      counts.set('waking', sources.waiting().flights);
      setCounts(this, 'state', environmentStates, counts);
    },
  });
  const proxyDuration = metrics.histogram<'target'>({
    name: 'router_proxy_duration_seconds',
    help: 'Proxied requests, from sending to the upstream to its answer’s headers (time to first byte; a wake before it is not included), by target',
    labelNames: ['target'],
  });
  const proxyFailures = metrics.counter<'target'>({
    name: 'router_proxy_failures_total',
    help: 'Proxied requests whose upstream failed before answering (answered 503 with Retry-After), by target',
    labelNames: ['target'],
  });
  const deliveries = metrics.counter<'outcome'>({
    name: 'router_wake_deliveries_total',
    help: 'Scheduler wakes handed to a daemon (POST /internal/wake), by how the router answered: accepted, duplicate, checked, refused, failed',
    labelNames: ['outcome'],
  });
  // Every series of a closed set exists from the start at 0, so a rate over it is defined before its first event.
  for (const outcome of wakeOutcomes) wakes.inc({ outcome }, 0);
  for (const outcome of deliveryOutcomes) deliveries.inc({ outcome }, 0);
  const woke = byValue(wakeOutcomes, (outcome) => wakes.labels(outcome));
  const delivered = byValue(deliveryOutcomes, (outcome) => deliveries.labels(outcome));
  const proxy = byValue(proxyTargets, (target): ProxyTiming => {
    proxyDuration.zero({ target });
    proxyFailures.inc({ target }, 0);
    const latency = proxyDuration.labels(target);
    const failures = proxyFailures.labels(target);
    return { answered: (seconds: number) => latency.observe(seconds), failed: () => failures.inc() };
  });
  return {
    wakes: {
      woke(outcome, durationMs) {
        woke[outcome].inc();
        if (outcome !== 'ready') return;
        wakeDuration.observe(durationMs / 1000);
        coldStarts.inc();
      },
    },
    proxy,
    delivered: (outcome) => delivered[outcome].inc(),
  };
}
