import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

type MetricJson = MetricObjectWithValues<MetricValue<string>>;

const metricName = /^[a-z][a-z0-9_]*$/;
const types = new Set(['counter', 'gauge', 'histogram', 'summary']);
// prom-client's aggregators (lib/metricAggregators.js): a name outside them would make the sum throw.
const aggregators = new Set(['sum', 'first', 'min', 'max', 'average', 'omit']);

/**
 * The metrics of one child process as its `/metrics` answered them in JSON (`Accept: application/json`), checked: only
 * well-formed metrics whose name starts with one of `prefixes`, each value a number with string or number labels.
 * What a child sends is not trusted to be the platform's code: it cannot add metrics of another name, nor break the sum.
 */
export function childMetrics(json: unknown, prefixes: readonly string[]): MetricJson[] {
  if (!Array.isArray(json)) return [];
  return json.filter((metric): metric is MetricJson => {
    if (typeof metric !== 'object' || metric === null) return false;
    const { name, help, type, values, aggregator } = metric as Record<string, unknown>;
    if (typeof name !== 'string' || !metricName.test(name) || !prefixes.some((prefix) => name.startsWith(prefix))) return false;
    if (typeof help !== 'string' || typeof type !== 'string' || !types.has(type) || !Array.isArray(values)) return false;
    if (aggregator !== undefined && (typeof aggregator !== 'string' || !aggregators.has(aggregator))) return false;
    return values.every((entry: unknown) => {
      const { value, labels } = (entry ?? {}) as { value?: unknown; labels?: unknown };
      if (typeof value !== 'number' || typeof labels !== 'object' || labels === null) return false;
      return Object.values(labels).every((label) => typeof label === 'string' || typeof label === 'number');
    });
  });
}

/**
 * Many processes' metrics summed into one exposition, as prom-client sums a cluster's workers: counters, gauges and
 * histogram buckets add up series by series (the same name and labels), and each metric that says otherwise is
 * aggregated its own way (process start time omitted, event-loop lag averaged, the Node version taken once). No label
 * is added to tell the processes apart: one series per label set whatever the number of processes.
 *
 * @example const text = await summedMetrics(children.map((json) => childMetrics(json, ['daemon_', 'http_'])))
 */
export async function summedMetrics(parts: readonly MetricJson[][]): Promise<string> {
  return AggregatorRegistry.aggregate(parts.filter((part) => part.length > 0)).metrics();
}
