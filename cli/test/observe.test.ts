import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { metricsTargets, observabilityDir, observeMessage, scrapeConfig } from '../src/observe.ts';

// biome-ignore lint/suspicious/noExplicitAny: a Prometheus configuration read as the YAML it is.
type Json = Record<string, any>;

describe('platform up --observe, its parts', () => {
  const rows = [
    { name: 'scheduler', url: 'http://127.0.0.1:9096' },
    { name: 'settlement-1', url: 'http://127.0.0.1:40001' },
    { name: 'settlement-2', url: 'http://127.0.0.1:40002' },
    { name: 'settlement', url: 'http://127.0.0.1:9090' },
    { name: 'router', url: 'http://127.0.0.1:8080', links: { internalUrl: 'http://127.0.0.1:8081' } },
    { name: 'identity', url: 'http://127.0.0.1:9000' },
  ];

  test("metrics targets: the router's internal listener, a scaled service's instances and not their front, no identity provider", () => {
    assert.deepEqual(metricsTargets(rows), [
      { job: 'scheduler', url: 'http://127.0.0.1:9096/metrics' },
      { job: 'settlement', url: 'http://127.0.0.1:40001/metrics' },
      { job: 'settlement', url: 'http://127.0.0.1:40002/metrics' },
      { job: 'router', url: 'http://127.0.0.1:8081/metrics' },
      { job: 'daemons', url: 'http://127.0.0.1:8081/metrics/daemons' },
    ]);
  });

  test('the scrape configuration: a job per service, its instances as targets, the bearer from a file, the alert rules', () => {
    const config = parse(scrapeConfig(metricsTargets(rows), '/data dir/observe/metrics-token')) as Json;
    assert.deepEqual(config.rule_files, [join(observabilityDir, 'alerts.yml')]);
    assert.deepEqual(
      config.scrape_configs.map((job: Json) => [job.job_name, job.static_configs[0].targets]),
      [
        ['scheduler', ['127.0.0.1:9096']],
        ['settlement', ['127.0.0.1:40001', '127.0.0.1:40002']],
        ['router', ['127.0.0.1:8081']],
        ['daemons', ['127.0.0.1:8081']],
      ],
    );
    for (const job of config.scrape_configs) {
      assert.equal(job.metrics_path, job.job_name === 'daemons' ? '/metrics/daemons' : '/metrics');
      assert.deepEqual(job.authorization, { type: 'Bearer', credentials_file: '/data dir/observe/metrics-token' });
    }
  });

  test('the message names the traces endpoint when OTEL_EXPORTER_OTLP_ENDPOINT is set, and how to set it when not', () => {
    const files = { config: '/tmp/x/observe/prometheus.yml' };
    assert.match(
      observeMessage({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, [], files),
      /traces: exported over OTLP\/HTTP to http:\/\/127\.0\.0\.1:4318/,
    );
    assert.match(observeMessage({}, [], files), /run up with OTEL_EXPORTER_OTLP_ENDPOINT=http:\/\/127\.0\.0\.1:4318/);
    assert.match(observeMessage({ DATA_DIR: '/d' }, [], files), /Bearer \$\(DATA_DIR=\/d npx platform secret PLATFORM_METRICS_TOKEN\)/);
  });
});
