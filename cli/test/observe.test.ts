import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pollUntil } from '@platform/testkit/eventually';
import { startPlatform } from '@platform/testkit/platform-up';
import { parse } from 'yaml';
import { metricsTargets, observabilityDir, observeMessage, scrapeConfig } from '../src/observe.ts';

// biome-ignore lint/suspicious/noExplicitAny: a Prometheus configuration read as the YAML it is.
type Json = Record<string, any>;
const promtool = spawnSync('promtool', ['--version']).status === 0;

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

test('platform up --observe prints every service’s metrics URL, each answering with the bearer it names, and writes a Prometheus config for them', async () => {
  const platform = await startPlatform({ args: ['--observe'] });
  try {
    // The observe block follows the ready message; its last line is about traces.
    await pollUntil(() => /^traces: /m.test(platform.output().stdout), 'the observe block', { timeoutMs: 10_000 });
    const stdout = platform.output().stdout;
    const lines = stdout.split('\n');
    const start = lines.findIndex((line) => /^ {2}job\s+url$/.test(line));
    const printed = lines
      .slice(start + 1)
      .filter((line) => /^ {2}\S+\s+http:/.test(line))
      .map((line) => line.trim().split(/\s+/) as [string, string]);
    const jobs = printed.map(([job]) => job);
    for (const service of ['scheduler', 'contracts', 'settlement', 'marketplace', 'gateway', 'memory', 'connector', 'daemon', 'router'])
      assert.ok(jobs.includes(service), `${service} is listed`);
    assert.ok(!jobs.includes('identity'));
    const routerMetrics = printed.find(([job]) => job === 'router')?.[1] as string;
    assert.notEqual(new URL(routerMetrics).origin, new URL(platform.url('router')).origin, "the router's internal listener, not its public one");

    const token = await platform.secret('PLATFORM_METRICS_TOKEN');
    const failing: string[] = [];
    for (const [job, url] of printed) {
      const answer = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      const text = await answer.text();
      // The router's daemons, summed: none has been woken here, so the answer holds only what the router adds.
      const expected = job === 'daemons' ? /^# TYPE daemon_scrapes gauge$/m : /^# TYPE http_requests_total counter$/m;
      if (answer.status !== 200 || !expected.test(text)) failing.push(`${job} ${url}: ${answer.status}`);
    }
    assert.deepEqual(failing, [], 'every listed URL serves metrics with the bearer');
    assert.equal((await fetch(printed[0]?.[1] as string)).status, 401, 'and none without it');

    const configPath = /--config\.file=(\S+)/.exec(stdout)?.[1] as string;
    assert.equal(configPath, join(platform.dataDir, 'observe', 'prometheus.yml'));
    const config = parse(readFileSync(configPath, 'utf8')) as Json;
    const scraped = config.scrape_configs.flatMap((job: Json) => job.static_configs[0].targets.map((target: string) => `${job.job_name} ${target}`));
    assert.deepEqual(scraped.sort(), printed.map(([job, url]) => `${job} ${new URL(url).host}`).sort());
    const tokenFile = config.scrape_configs[0].authorization.credentials_file;
    assert.equal(readFileSync(tokenFile, 'utf8').trim(), token);
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    if (promtool) {
      const checked = spawnSync('promtool', ['check', 'config', configPath], { encoding: 'utf8' });
      assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    }
    assert.match(stdout, /npx platform secret PLATFORM_METRICS_TOKEN/);
    assert.match(stdout, /^traces: off; .*OTEL_EXPORTER_OTLP_ENDPOINT=/m);
  } finally {
    assert.equal(await platform.stop(), 0);
  }
});
