import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { dashboards, dashboardsDir, dashboardText } from '../src/dashboards.ts';
import { validateObject } from '../src/helm-render.ts';
import { labelValuesMetric, type Selected, selectedMetrics } from '../src/promql.ts';
import { type Exposed, exposedMetrics } from '../src/service-metrics.ts';
import { deployedServices, repo } from '../src/service-settings.ts';

const observability = join(repo, 'deploy', 'observability');
// biome-ignore lint/suspicious/noExplicitAny: rule files and dashboards are read as the YAML and JSON they are.
type Json = Record<string, any>;
const rules = parse(readFileSync(join(observability, 'alerts.yml'), 'utf8')) as { groups: { name: string; rules: Json[] }[] };
const alerts = rules.groups.flatMap((group) => group.rules);

/** Series Prometheus makes itself (not any service's), and the labels its targets carry. */
const prometheusOwn = new Set(['up', 'ALERTS', 'scrape_duration_seconds', 'scrape_samples_scraped']);
const targetLabels = new Set(['job', 'instance', 'namespace', 'alertname', 'alertstate']);

/** promtool from Debian's `prometheus` package (`apt-get install prometheus`), when this machine has it. */
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0 ? 'promtool' : undefined;
const runPromtool = (args: string[], cwd: string) => {
  const run = spawnSync(promtool as string, args, { cwd, encoding: 'utf8' });
  assert.equal(run.status, 0, `promtool ${args.join(' ')}:\n${run.stdout}${run.stderr}`);
  return run.stdout;
};

/** Every PromQL expression of the rules and dashboards, with where it is. */
function queries(): { where: string; expr: string }[] {
  const found = alerts.map((rule) => ({ where: `alerts.yml ${rule.alert}`, expr: rule.expr as string }));
  for (const file of readdirSync(join(observability, 'dashboards'))) {
    const dashboard = JSON.parse(readFileSync(join(observability, 'dashboards', file), 'utf8')) as Json;
    for (const panel of dashboard.panels as Json[])
      for (const target of panel.targets ?? []) found.push({ where: `${file} "${panel.title}"`, expr: target.expr });
  }
  return found;
}

describe('deploy/observability', () => {
  test("every metric the alert rules and dashboards name is registered by a service's metrics.ts or the kit, with the labels they match", async () => {
    const exposed: Map<string, Exposed> = await exposedMetrics();
    const selected: { where: string; selected: Selected }[] = queries().flatMap(({ where, expr }) =>
      selectedMetrics(expr).map((one) => ({ where, selected: one })),
    );
    for (const file of readdirSync(join(observability, 'dashboards'))) {
      const dashboard = JSON.parse(readFileSync(join(observability, 'dashboards', file), 'utf8')) as Json;
      for (const variable of dashboard.templating.list as Json[]) {
        const metric = variable.type === 'query' ? labelValuesMetric(variable.query.query) : undefined;
        if (variable.type === 'query') assert.ok(metric, `${file} $${variable.name}: label_values(<metric>, <label>)`);
        if (metric) selected.push({ where: `${file} $${variable.name}`, selected: metric });
      }
    }
    assert.ok(selected.length > 100, `${selected.length} selectors read`);
    const missing: string[] = [];
    for (const { where, selected: one } of selected) {
      if (prometheusOwn.has(one.metric)) continue;
      const series = exposed.get(one.metric);
      if (series === undefined) {
        missing.push(`${where}: ${one.metric}`);
        continue;
      }
      for (const label of one.labels)
        if (series.labels !== undefined && !targetLabels.has(label) && !series.labels.has(label))
          missing.push(`${where}: ${one.metric} has no label ${label} (it has ${[...series.labels].join(', ')})`);
    }
    assert.deepEqual(missing, []);
    // The contract's domain metrics each show somewhere: every service's own metric is on a dashboard or an alert.
    const used = new Set(selected.map(({ selected: one }) => one.metric.replace(/_(bucket|sum|count)$/, '')));
    const unused = [...exposed.entries()]
      .filter(([name, series]) => !['kit', 'process'].includes(series.owner) && !/_(sum|count)$/.test(name))
      .map(([name]) => name.replace(/_bucket$/, ''))
      .filter((name) => !used.has(name));
    assert.deepEqual(unused, [], 'domain metrics no dashboard shows');
  });

  test('the alerts the issue asks for, each with a severity, a `for:` and runbook annotations that name a file of the repository', () => {
    const names = alerts.map((rule) => rule.alert);
    for (const wanted of [
      'SettlementNotFullyReserved',
      'SettlementAnchorLagging',
      'SchedulerFiresLate',
      'GatewayUpstreamErrors',
      'SettlementWithoutSequencer',
      'RouterWakeFailures',
    ])
      assert.ok(names.includes(wanted), wanted);
    assert.equal(new Set(names).size, names.length, 'alert names are unique');
    for (const rule of alerts) {
      assert.ok(['critical', 'warning'].includes(rule.labels?.severity), `${rule.alert}: severity`);
      assert.match(String(rule.for), /^\d+[smh]$/, `${rule.alert}: for`);
      for (const annotation of ['summary', 'description', 'runbook']) assert.ok(rule.annotations?.[annotation], `${rule.alert}: ${annotation}`);
      const [file] = String(rule.annotations.runbook).split('#');
      assert.ok(existsSync(join(repo, file as string)), `${rule.alert}: runbook ${file}`);
    }
    assert.match(String(alerts.find((rule) => rule.alert === 'SchedulerFiresLate')?.expr), /histogram_quantile\(0\.99,.*\) > 1\b/s);
  });

  test('the rules are a valid PrometheusRule spec as they are (for the Prometheus Operator)', async () => {
    await validateObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'platform' }, spec: rules });
  });

  test('the dashboards are what src/dashboards.ts writes (`npm run dashboards -w packages/deploy-tests`), one file each, unique uids', () => {
    assert.deepEqual(readdirSync(dashboardsDir).sort(), dashboards.map((dashboard) => dashboard.file).sort());
    for (const dashboard of dashboards) assert.equal(readFileSync(join(dashboardsDir, dashboard.file), 'utf8'), dashboardText(dashboard), dashboard.file);
    assert.equal(new Set(dashboards.map((dashboard) => dashboard.uid)).size, dashboards.length);
    assert.ok(dashboards.length >= 7);
  });

  test('prometheus.yml scrapes every deployed service as its own job, with the bearer from a file; the router on its internal port', () => {
    const config = parse(readFileSync(join(observability, 'prometheus.yml'), 'utf8')) as Json;
    const jobs = config.scrape_configs as Json[];
    // The router's per-user daemons, summed by the router on its internal listener, are a job of their own.
    assert.deepEqual(jobs.map((job) => job.job_name).sort(), [...deployedServices, 'daemons'].sort());
    for (const job of jobs) {
      assert.deepEqual(job.authorization, { type: 'Bearer', credentials_file: '/etc/prometheus/metrics-token' }, job.job_name);
      const onRouter = job.job_name === 'router' || job.job_name === 'daemons';
      assert.equal(job.metrics_path, job.job_name === 'daemons' ? '/metrics/daemons' : undefined, `${job.job_name}: its path`);
      assert.deepEqual(job.static_configs[0].targets, [onRouter ? 'router:8081' : `${job.job_name}:8080`]);
    }
    assert.deepEqual(config.rule_files, ['alerts.yml']);
    // Without the operator, in Kubernetes: the pods' annotations, the job from the component label, the bearer.
    const kubernetes = parse(readFileSync(join(observability, 'prometheus-kubernetes.yml'), 'utf8')) as Json;
    const [job] = kubernetes.scrape_configs as [Json];
    assert.equal(job.authorization.credentials_file, '/etc/prometheus/metrics/token');
    assert.ok(
      job.relabel_configs.some(
        (rule: Json) => rule.target_label === 'job' && rule.source_labels[0] === '__meta_kubernetes_pod_label_app_kubernetes_io_component',
      ),
    );
  });

  describe('with promtool', { skip: promtool === undefined && 'promtool is not installed (apt-get install prometheus)' }, () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'promtool-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('`promtool check rules` passes', () => {
      assert.match(runPromtool(['check', 'rules', join(observability, 'alerts.yml')], dir), /SUCCESS: \d+ rules found/);
    });

    test('each alert fires on the series it is about, after its `for:`, and not before (test/fixtures/alert-cases.yml)', () => {
      // The cases check expressions and timing; the annotations' prose is left out of the copy.
      const bare = { groups: rules.groups.map((group) => ({ ...group, rules: group.rules.map(({ annotations: _, ...rule }) => rule) })) };
      writeFileSync(join(dir, 'alerts.yml'), stringify(bare));
      copyFileSync(join(import.meta.dirname, 'fixtures', 'alert-cases.yml'), join(dir, 'alert-cases.yml'));
      runPromtool(['test', 'rules', 'alert-cases.yml'], dir);
      // And a case can fail: an alert expected where none fires.
      writeFileSync(
        join(dir, 'wrong.yml'),
        readFileSync(join(dir, 'alert-cases.yml'), 'utf8').replace(
          'eval_time: 3m, alertname: SettlementNotFullyReserved',
          'eval_time: 1m, alertname: SettlementAnchorLagging, exp_alerts: [{ exp_labels: {} }], x: 1 }\n      - { eval_time: 3m, alertname: SettlementNotFullyReserved',
        ),
      );
      assert.notEqual(spawnSync(promtool as string, ['test', 'rules', 'wrong.yml'], { cwd: dir }).status, 0);
    });

    test('`promtool check config` passes for prometheus.yml (its credentials file and rules beside it)', () => {
      const token = join(dir, 'metrics-token');
      writeFileSync(token, 'token\n');
      copyFileSync(join(observability, 'alerts.yml'), join(dir, 'alerts.yml'));
      writeFileSync(
        join(dir, 'prometheus.yml'),
        readFileSync(join(observability, 'prometheus.yml'), 'utf8').replaceAll('/etc/prometheus/metrics-token', token),
      );
      runPromtool(['check', 'config', 'prometheus.yml'], dir);
    });
  });
});
