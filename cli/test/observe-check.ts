import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pollUntil } from '@platform/testkit/eventually';
import type { RunningPlatform } from '@platform/testkit/platform-up';
import { parse } from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: a Prometheus configuration read as the YAML it is.
type Json = Record<string, any>;
const promtool = spawnSync('promtool', ['--version']).status === 0;

/**
 * `platform up --observe` as a user reads it: every service's metrics URL listed (the router's internal listener),
 * each answering with the bearer it names and refusing without it, and a Prometheus config for exactly those targets
 * written into the data folder with the bearer beside it (0600), valid for promtool; `traces` matches the traces line.
 * Run by the trace test (cli/test/tracing-e2e.test.ts) on the platform it starts with `--observe`: one `platform up`
 * for both, since a whole platform is most of a test run's time on two cores.
 */
export async function assertObserveOutput(platform: RunningPlatform, traces: RegExp): Promise<void> {
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
  assert.match(stdout, traces);
}
