import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { platformBin } from '@platform/testkit/run-command';
import { parseAllDocuments } from 'yaml';
import { readCompose, readEnvFile, serviceEnvironment } from '../src/compose-file.ts';
import { allowed, type KubeObject, renderChart, selects, validateObject } from '../src/helm-render.ts';
import { deployedServices, loadServiceConfig, repo } from '../src/service-settings.ts';

const chartDir = join(repo, 'deploy', 'helm', 'platform');
const release = 'agents';
const namespace = 'platform';
const monitoring = 'monitoring';
const rootSecret = 'observability-check-root-secret-0123456789abcdef';
const otlp = 'http://otel-collector.monitoring:4318';

/** The metrics port of a service's pods: the router's private listener, every other's http port. */
const metricsPort = (name: string) => (name === 'router' ? 8081 : 8080);

describe('the Helm chart and compose, wired for Prometheus and OpenTelemetry', () => {
  let envDir: string;
  let objects: KubeObject[];
  let secrets: KubeObject[];
  const of = (kind: string) => objects.filter((object) => object.kind === kind);

  before(async () => {
    envDir = mkdtempSync(join(tmpdir(), 'observability-env-'));
    const env = {
      PATH: process.env.PATH ?? '',
      PLATFORM_SECRET: rootSecret,
      DATABASE_URL: 'postgres://platform:pw@db.example:5432/platform',
      RELEASE: release,
      OUT_DIR: envDir,
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer collector-key',
      PLATFORM_COMMAND: `${process.execPath} ${platformBin}`,
    };
    const run = spawnSync('sh', [join(repo, 'deploy', 'helm', 'make-secrets.sh')], { env, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    secrets = parseAllDocuments(run.stdout).map((document) => document.toJS() as KubeObject);
    objects = await renderChart(chartDir, {
      release,
      namespace,
      values: {
        metrics: { serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus-stack' } } },
        otel: { endpoint: otlp, sampler: 'parentbased_traceidratio', samplerArg: '0.25' },
      },
    });
  });
  after(() => rmSync(envDir, { recursive: true, force: true }));

  test('a ServiceMonitor per service, valid, selecting the one Service with its metrics port, the bearer from <release>-metrics', async () => {
    const monitors = of('ServiceMonitor');
    assert.deepEqual(monitors.map((monitor) => monitor.metadata.name).sort(), deployedServices.map((name) => `${release}-${name}`).sort());
    const metricsSecret = secrets.find((secret) => secret.metadata.name === `${release}-metrics`);
    assert.ok(metricsSecret, 'make-secrets.sh makes the metrics Secret');
    for (const name of deployedServices) {
      const monitor = monitors.find((candidate) => candidate.metadata.name === `${release}-${name}`) as KubeObject;
      await validateObject(monitor);
      assert.equal(monitor.metadata.labels.release, 'kube-prometheus-stack', 'the labels Prometheus selects monitors by');
      assert.equal(monitor.spec.jobLabel, 'app.kubernetes.io/component');
      const chosen = of('Service').filter((service) => selects(monitor.spec.selector, service.metadata.labels));
      assert.equal(chosen.length, 1, `${name}: one Service`);
      const [service] = chosen as [KubeObject];
      assert.equal(service.metadata.labels['app.kubernetes.io/component'], name, `${name}: the job label is the service's name`);
      const [endpoint] = monitor.spec.endpoints;
      const port = service.spec.ports.find((candidate: KubeObject) => candidate.name === endpoint.port);
      assert.equal(port?.port, metricsPort(name), `${name}: scraped on ${endpoint.port}`);
      assert.equal(endpoint.path, '/metrics');
      assert.deepEqual(endpoint.authorization, { type: 'Bearer', credentials: { name: `${release}-metrics`, key: 'token' } });
      // The bearer Prometheus presents is the one the service checks.
      const own = secrets.find((secret) => secret.metadata.name === `${release}-${name}`);
      assert.equal(own?.stringData.PLATFORM_METRICS_TOKEN, metricsSecret.stringData.token, name);
    }
    const plain = await renderChart(chartDir, { release, namespace });
    assert.equal(plain.filter((object) => object.kind === 'ServiceMonitor').length, 0, 'off by default: the CRD may not exist');
  });

  test('pods carry the scrape annotations of their metrics port, and the NetworkPolicies let Prometheus reach that port only', () => {
    const policies = of('NetworkPolicy');
    const prometheus = { namespace: monitoring, namespaceLabels: { 'kubernetes.io/metadata.name': monitoring }, labels: { app: 'prometheus' } };
    for (const name of deployedServices) {
      const deployment = of('Deployment').find((candidate) => candidate.metadata.name === `${release}-${name}`) as KubeObject;
      const pod = deployment.spec.template;
      assert.deepEqual(pod.metadata.annotations, {
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(metricsPort(name)),
        'prometheus.io/path': '/metrics',
      });
      assert.ok(pod.spec.containers[0].ports.some((port: KubeObject) => port.containerPort === metricsPort(name)));
      const target = { namespace, labels: pod.metadata.labels };
      assert.equal(allowed(policies, target, prometheus, metricsPort(name)), true, `Prometheus reaches ${name}:${metricsPort(name)}`);
    }
    const router = of('Deployment').find((candidate) => candidate.metadata.name === `${release}-router`) as KubeObject;
    assert.equal(allowed(policies, { namespace, labels: router.spec.template.metadata.labels }, prometheus, 8080), false, "not the router's public listener");
  });

  test('OTEL_* reach every service (the collector, its credentials from the Secret, the sampler), and each service takes them', async () => {
    for (const name of deployedServices) {
      const deployment = of('Deployment').find((candidate) => candidate.metadata.name === `${release}-${name}`) as KubeObject;
      const [container] = deployment.spec.template.spec.containers;
      const env: Record<string, string> = { ...secrets.find((secret) => secret.metadata.name === `${release}-${name}`)?.stringData };
      for (const entry of container.env) env[entry.name] = entry.valueFrom ? namespace : entry.value;
      assert.equal(env.OTEL_EXPORTER_OTLP_ENDPOINT, otlp, name);
      assert.equal(env.OTEL_SERVICE_NAME, name);
      assert.equal(env.OTEL_EXPORTER_OTLP_HEADERS, 'Authorization=Bearer collector-key', `${name}: from its Secret`);
      assert.equal(env.OTEL_TRACES_SAMPLER, 'parentbased_traceidratio');
      assert.equal(env.OTEL_TRACES_SAMPLER_ARG, '0.25');
      assert.match(env.OTEL_RESOURCE_ATTRIBUTES as string, new RegExp(`^service\\.namespace=${release},k8s\\.namespace\\.name=${namespace}$`));
      await loadServiceConfig(name, env);
    }
    const plain = await renderChart(chartDir, { release, namespace });
    const [container] = plain.find((object) => object.kind === 'Deployment')?.spec.template.spec.containers ?? [];
    assert.ok(!container.env.some((entry: KubeObject) => entry.name.startsWith('OTEL_')), 'no endpoint, no tracing settings');
  });

  test("compose's observability profile mounts the files prometheus.yml names, the bearer make-compose-env.sh wrote, and Grafana's dashboards", () => {
    const variables = { ...readEnvFile(join(repo, 'deploy', 'compose.env.example')), OTEL_EXPORTER_OTLP_ENDPOINT: otlp };
    const compose = readCompose(join(repo, 'deploy', 'compose.yaml'), variables);
    const prometheus = compose.services.prometheus as KubeObject;
    const mounts = new Map((prometheus.volumes as string[]).map((volume) => [volume.split(':')[1], volume.split(':')[0]]));
    assert.equal(mounts.get('/etc/prometheus/prometheus.yml'), './observability/prometheus.yml');
    assert.equal(mounts.get('/etc/prometheus/alerts.yml'), './observability/alerts.yml', 'rule_files: alerts.yml, beside the config');
    assert.equal(mounts.get('/etc/prometheus/metrics-token'), './env/metrics-token', 'the credentials_file prometheus.yml names');
    assert.match(readFileSync(join(repo, 'deploy', 'observability', 'prometheus.yml'), 'utf8'), /credentials_file: \/etc\/prometheus\/metrics-token/);
    const grafana = compose.services.grafana as KubeObject;
    assert.ok(grafana.volumes.includes('./observability/dashboards:/var/lib/grafana/dashboards:ro'));
    assert.match(readFileSync(join(repo, 'deploy', 'observability', 'grafana', 'dashboards', 'platform.yml'), 'utf8'), /path: \/var\/lib\/grafana\/dashboards/);
    for (const name of deployedServices) {
      const env = serviceEnvironment(compose.services[name] as never, (file) => join(envDir, file.replace(/^env\//, '')));
      assert.equal(env.OTEL_EXPORTER_OTLP_ENDPOINT, otlp, `${name}: OTEL_* passed through from .env`);
      assert.ok(env.PLATFORM_METRICS_TOKEN, `${name}: its metrics bearer`);
    }
  });
});
