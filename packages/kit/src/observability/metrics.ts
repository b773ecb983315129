import { AggregatorRegistry, collectDefaultMetrics, Gauge, type MetricObjectWithValues, type MetricValue, Registry } from 'prom-client';
import { type CounterMetric, type HistogramMetric, hotCounter, hotHistogram } from './hot-metrics.ts';

export type { CounterChild, CounterMetric, HistogramChild, HistogramMetric } from './hot-metrics.ts';

/**
 * A service's Prometheus metrics: one registry per service instance (tests build several apps in one process), with
 * the process's own metrics (CPU, memory, event-loop lag, GC) merged in when scraped.
 *
 * Names: the kit's metrics are `http_*` and `db_*`, shared by every service (Prometheus' `job` label tells the services
 * apart); a service's own are `<service>_*` (`scheduler_fire_lateness_seconds`). Units in the name, seconds and bytes.
 *
 * Labels: every label is declared when its metric is made, and every value comes from a closed set the code knows:
 * an enum (an outcome, a state, a rail), a status class, a route template (never the raw URL), a configured name (a
 * model the gateway's catalogue lists, a slot). Never a DID, a user, an intent or deployment id, a URL or free text:
 * each distinct value is a time series kept forever, so an unbounded value grows Prometheus without limit and would
 * also publish who uses the platform. `boundedLabel` folds a value outside its closed set into `other`.
 */
export interface ServiceMetrics {
  readonly service: string;
  readonly registry: Registry;
  /** Counters and histograms step in nanoseconds (hot-metrics.ts); gauges, set at scrape time or seldom, are prom-client's. */
  counter<L extends string = never>(config: MetricConfig<L>): CounterMetric<L>;
  gauge<L extends string = never>(config: GaugeConfig<L>): Gauge<L>;
  histogram<L extends string = never>(config: HistogramConfig<L>): HistogramMetric<L>;
  /** The Prometheus text exposition: this service's metrics (its other threads' summed in) and the process's. */
  render(): Promise<string>;
  /** The same as prom-client's JSON (`getMetricsAsJSON`), for a parent that sums its children's (`aggregate-metrics.ts`). */
  json(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
  readonly contentType: string;
  /**
   * Adds metrics other threads of this service keep in registries of their own (settlement's front threads): at each
   * scrape `read` answers each thread's `registry.getMetricsAsJSON()`, and `render` sums them with this registry's,
   * series by series (name and labels), as prom-client's cluster aggregation does. A read that fails leaves those
   * threads out of that scrape rather than failing it.
   */
  addThreads(read: () => Promise<ThreadMetrics[]>): void;
}

/** One thread's metrics as `registry.getMetricsAsJSON()` answers them (structured-clone safe, for a MessagePort). */
export type ThreadMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export interface MetricConfig<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

export interface GaugeConfig<L extends string> extends MetricConfig<L> {
  /**
   * Read at scrape time (a count the database holds, a queue's length): set the gauge from `this`. One that fails (the
   * database is down) leaves the values it set last, so `/metrics` still answers with the `db_*` metrics that say why.
   */
  collect?: (this: Gauge<L>) => void | Promise<void>;
}

export interface HistogramConfig<L extends string> extends MetricConfig<L> {
  buckets?: readonly number[];
}

/** Where every service serves its metrics. The transport bearer leaves it to its own bearer, the metrics token. */
export const metricsPath = '/metrics';

/** Latency buckets in seconds, 1 ms to 10 s: a request, a query, a wake, an upstream call. */
export const latencyBuckets: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const metricName = /^[a-z][a-z0-9_]*$/;
const sharedPrefixes = ['http_', 'db_'];

/**
 * @example const metrics = createServiceMetrics('scheduler'); const fires = metrics.counter({ name: 'scheduler_fires_total', help: '…', labelNames: ['outcome'] })
 */
export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  const threads: Array<() => Promise<ThreadMetrics[]>> = [];
  // Made twice with the same name (an app rebuilt over the same metrics in a test): the one already registered.
  const existing = <M>(name: string): M | undefined => registry.getSingleMetric(checkedName(service, name)) as M | undefined;
  return {
    service,
    registry,
    counter: (config) => existing(config.name) ?? hotCounter(registry, labelled(config)),
    gauge: (config) =>
      existing(config.name) ?? new Gauge({ ...labelled(config), ...(config.collect && { collect: lenient(config.collect) }), registers: [registry] }),
    histogram: (config) => existing(config.name) ?? hotHistogram(registry, { ...labelled(config), buckets: config.buckets ?? latencyBuckets }),
    render: async () => (await Registry.merge([processRegistry(), threads.length === 0 ? registry : await summed(registry, threads)]).metrics()) as string,
    json: async () => Registry.merge([processRegistry(), threads.length === 0 ? registry : await summed(registry, threads)]).getMetricsAsJSON(),
    contentType: registry.contentType,
    addThreads: (read) => {
      threads.push(read);
    },
  };
}

async function summed(registry: Registry, threads: Array<() => Promise<ThreadMetrics[]>>): Promise<Registry> {
  const others = await Promise.all(threads.map((read) => read().catch(() => [])));
  return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...others.flat()]);
}

function labelled<L extends string>(config: MetricConfig<L>) {
  return { name: config.name, help: config.help, labelNames: [...(config.labelNames ?? [])] as L[] };
}

function lenient<L extends string>(collect: (this: Gauge<L>) => void | Promise<void>) {
  return async function (this: Gauge<L>) {
    try {
      await collect.call(this);
    } catch {
      // The last values stay (GaugeConfig.collect).
    }
  };
}

function checkedName(service: string, name: string): string {
  if (!metricName.test(name)) throw new Error(`metric name ${name} is not snake_case`);
  if (!name.startsWith(`${service}_`) && !sharedPrefixes.some((prefix) => name.startsWith(prefix)))
    throw new Error(`metric ${name} of ${service} must start with ${service}_ (or a kit prefix: ${sharedPrefixes.join(', ')})`);
  return name;
}

/**
 * `value` when it is one of `allowed`, else `other`: for a label read from input a caller controls (an HTTP method, a
 * model name a request named), so no caller can mint new series.
 *
 * @example boundedLabel(request.method, httpMethods)
 */
export function boundedLabel<T extends string>(value: string, allowed: ReadonlySet<T>): T | 'other' {
  return allowed.has(value as T) ? (value as T) : 'other';
}

/**
 * Sets a gauge labelled by one closed set from counts (a `group by` at scrape time): every value of the set is
 * written, 0 when it has no count, so a state that empties reads 0 instead of keeping its last count.
 *
 * @example setCounts(gauge, 'state', ['active', 'suspended'], new Map([['active', 3]]))
 */
export function setCounts<L extends string>(gauge: Gauge<L>, label: L, values: readonly string[], counts: ReadonlyMap<string, number>): void {
  for (const value of values) gauge.set({ [label]: value } as Partial<Record<L, string>>, counts.get(value) ?? 0);
}

let processMetrics: Registry | undefined;

/** The process's metrics, one collector per process whatever the number of services in it, started on the first scrape. */
function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics, eventLoopMonitoringPrecision: 10 });
  }
  return processMetrics;
}

/**
 * One thing per value of a closed set, made now: a metric's child per outcome (a field, no lookup at all), or what a
 * caller does with it. Typed by the set, so a value outside it does not compile.
 *
 * @example const woke = byValue(['ready', 'failed'] as const, (outcome) => wakes.labels(outcome)); woke.ready.inc()
 */
export function byValue<V extends string, T>(values: readonly V[], make: (value: V) => T): Record<V, T> {
  return Object.fromEntries(values.map((value) => [value, make(value)])) as Record<V, T>;
}
