import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Env } from '@platform/kit/config';
import { derivedValue, platformDataDir } from './platform-secrets.ts';
import { table } from './ready-message.ts';

/** A row of `up`'s table as `--observe` reads it: the router's other address is its internal listener. */
export interface ObservedRow {
  name: string;
  url: string;
  links?: Record<string, string>;
}

/** One service's metrics endpoint: the job Prometheus files it under (the service's name) and the URL. */
export interface MetricsTarget {
  job: string;
  url: string;
}

/** The rows that are not services with metrics of their own: the development identity provider. */
const unobserved = new Set(['identity']);

/** deploy/observability/, whose alert rules the written config loads and whose dashboards read the same names. */
export const observabilityDir = resolve(import.meta.dirname, '..', '..', 'deploy', 'observability');

/**
 * Where each service `up` runs serves `GET /metrics`: its URL, the router's internal listener (its public one serves
 * none), and there the router's daemons' summed (`/metrics/daemons`, job `daemons`). A service `--instances` scaled is its instances (`settlement-1`, …), each a process with metrics of its own,
 * never the front that forwards to them, all under the service's job.
 */
export function metricsTargets(rows: readonly ObservedRow[]): MetricsTarget[] {
  const scaled = new Set(rows.flatMap((row) => /^(.+)-\d+$/.exec(row.name)?.[1] ?? []));
  return rows
    .filter((row) => !unobserved.has(row.name) && !scaled.has(row.name))
    .flatMap((row) => {
      const job = row.name.replace(/-\d+$/, '');
      if (job !== 'router') return [{ job, url: `${row.url}/metrics` }];
      // The daemons the router starts, one per user, summed by the router into one set of series (no label per user).
      const internal = row.links?.internalUrl ?? row.url;
      return [
        { job, url: `${internal}/metrics` },
        { job: 'daemons', url: `${internal}/metrics/daemons` },
      ];
    });
}

/**
 * A Prometheus configuration scraping these targets: one job per service with the bearer read from `tokenFile`, and
 * deploy/observability's alert rules. JSON strings are YAML, so every value is written quoted as it is.
 */
export function scrapeConfig(targets: readonly MetricsTarget[], tokenFile: string): string {
  const jobs = new Map<string, URL[]>();
  for (const target of targets) jobs.set(target.job, [...(jobs.get(target.job) ?? []), new URL(target.url)]);
  const lines = [
    '# Written by `platform up --observe` for the services it runs; deploy/observability/prometheus.yml is the deployed form.',
    'global: { scrape_interval: 15s, evaluation_interval: 15s }',
    `rule_files: [${JSON.stringify(join(observabilityDir, 'alerts.yml'))}]`,
    'scrape_configs:',
  ];
  for (const [job, urls] of jobs)
    lines.push(
      `  - job_name: ${JSON.stringify(job)}`,
      `    metrics_path: ${JSON.stringify((urls[0] as URL).pathname)}`,
      `    authorization: { type: Bearer, credentials_file: ${JSON.stringify(tokenFile)} }`,
      `    static_configs: [{ targets: [${urls.map((url) => JSON.stringify(url.host)).join(', ')}] }]`,
    );
  return `${lines.join('\n')}\n`;
}

/** The files `--observe` writes into DATA_DIR/observe: the scrape configuration and the bearer it reads (0600). */
export function writeObserveFiles(env: Env, root: Buffer, targets: readonly MetricsTarget[]): { config: string; tokenFile: string } {
  const dir = resolve(platformDataDir(env), 'observe');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tokenFile = join(dir, 'metrics-token');
  // The value the services were given: the setting when it is set, else derived from the root as `up` derived it.
  writeFileSync(tokenFile, `${env.PLATFORM_METRICS_TOKEN || derivedValue('PLATFORM_METRICS_TOKEN', root)}\n`, { mode: 0o600 });
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, scrapeConfig(targets, tokenFile), { mode: 0o600 });
  return { config, tokenFile };
}

/** What `up --observe` prints after the ready message: the metrics URLs, their bearer, Prometheus' command, traces. */
export function observeMessage(env: Env, targets: readonly MetricsTarget[], files: { config: string }): string {
  const dataDir = env.DATA_DIR ? `DATA_DIR=${env.DATA_DIR} ` : '';
  const storage = join(files.config, '..', 'prometheus-data');
  const otlp = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return [
    '',
    'metrics (GET, Prometheus text; the router on its internal listener):',
    ...table([['job', 'url'], ...targets.map((target) => [target.job, target.url])])
      .split('\n')
      .map((line) => `  ${line}`),
    `  each asks for the bearer PLATFORM_METRICS_TOKEN: curl -H "Authorization: Bearer $(${dataDir}npx platform secret PLATFORM_METRICS_TOKEN)" ${targets[0]?.url ?? '<url>'}`,
    '',
    `Prometheus scraping this platform, with deploy/observability's alert rules (config and bearer written to ${join(files.config, '..')}):`,
    `  prometheus --config.file=${files.config} --storage.tsdb.path=${storage} --web.listen-address=127.0.0.1:9090`,
    '  (Prometheus: `apt-get install prometheus`, or its release binary; it reads the bearer from the file beside the config)',
    `  dashboards for Grafana: ${join(observabilityDir, 'dashboards')}`,
    '',
    otlp
      ? `traces: exported over OTLP/HTTP to ${otlp} (OTEL_EXPORTER_OTLP_ENDPOINT)`
      : 'traces: off; start an OTLP/HTTP collector (Jaeger, the OpenTelemetry Collector: port 4318) and run up with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318',
  ].join('\n');
}
