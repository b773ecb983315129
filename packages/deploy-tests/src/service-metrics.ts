import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { databaseMetrics } from '@platform/kit/db/database-metrics';
import { createServiceApp } from '@platform/kit/http/create-app';
import { createServiceMetrics, type ServiceMetrics } from '@platform/kit/observability/metrics';
import { silentLogger } from '@platform/testkit/databases';
import { repo } from './service-settings.ts';

/** Every service with metrics of its own: `services/<name>/src/metrics.ts` exports `<name>Metrics(metrics)`. */
export const meteredServices = ['scheduler', 'settlement', 'marketplace', 'gateway', 'memory', 'contracts', 'connector', 'router', 'daemon'] as const;

/** A series a scrape can hold: its sample name, the label names it carries, and whose it is. */
export interface Exposed {
  owner: string;
  /** Undefined when the labels are not known (the process's own metrics, from prom-client's defaults). */
  labels: ReadonlySet<string> | undefined;
}

type Family = { name: string; type: string; labelNames?: readonly string[] };

/** The sample names of a family as the text format writes them: a histogram's `_bucket` (with `le`), `_sum`, `_count`. */
function samplesOf(family: Family, owner: string, into: Map<string, Exposed>): void {
  const labels = family.labelNames === undefined ? undefined : new Set(family.labelNames);
  if (family.type === 'histogram' || family.type === 'summary') {
    const extra = family.type === 'histogram' ? 'le' : 'quantile';
    into.set(`${family.name}${family.type === 'histogram' ? '_bucket' : ''}`, { owner, labels: labels && new Set([...labels, extra]) });
    into.set(`${family.name}_sum`, { owner, labels });
    into.set(`${family.name}_count`, { owner, labels });
    return;
  }
  into.set(family.name, { owner, labels });
}

async function familiesOf(metrics: ServiceMetrics): Promise<Family[]> {
  // The metric objects themselves: their JSON form leaves the label names out.
  return metrics.registry.getMetricsAsArray().map((metric) => {
    const { name, type, labelNames } = metric as unknown as { name: string; type: string; labelNames: string[] };
    return { name, type, labelNames };
  });
}

/**
 * Every metric the code registers, as the deploy checks see them: each service's domain metrics from its
 * `<name>Metrics(createServiceMetrics(name))` (the convention: all of them registered eagerly), the kit's HTTP and
 * database metrics, and the process's (prom-client's defaults, merged into every scrape).
 */
export async function exposedMetrics(): Promise<Map<string, Exposed>> {
  const exposed = new Map<string, Exposed>();
  const missing = meteredServices.filter((service) => !existsSync(join(repo, 'services', service, 'src', 'metrics.ts')));
  if (missing.length > 0)
    throw new Error(`no src/metrics.ts in services ${missing.join(', ')}: each exports <name>Metrics(metrics), registering all its metrics`);
  for (const service of meteredServices) {
    const module = (await import(`../../../services/${service}/src/metrics.ts`)) as Record<string, (metrics: ServiceMetrics) => unknown>;
    const register = module[`${service}Metrics`];
    if (typeof register !== 'function') throw new Error(`services/${service}/src/metrics.ts exports no ${service}Metrics(metrics)`);
    const metrics = createServiceMetrics(service);
    register(metrics);
    for (const family of await familiesOf(metrics)) samplesOf(family, service, exposed);
  }
  const kit = createServiceMetrics('kit');
  createServiceApp({ logger: silentLogger, bodyLimit: 1024, api: { title: 'kit', version: '0.0.0' }, metrics: kit, countRequests: true });
  databaseMetrics(kit, { total: () => 0, idle: () => 0, waiting: () => 0 });
  for (const family of await familiesOf(kit)) samplesOf(family, 'kit', exposed);
  // The process's metrics are merged in at scrape time: read them from a scrape's # TYPE lines.
  const text = await createServiceMetrics('process').render();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm))
    if (!exposed.has(name as string)) samplesOf({ name: name as string, type: type as string }, 'process', exposed);
  return exposed;
}
