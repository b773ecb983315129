import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { platformBin } from '@platform/testkit/run-command';
import { parseAllDocuments } from 'yaml';
import { statefulSetFor } from '../../../services/router/src/environments/kubernetes-objects.ts';
import { allowed, type KubeObject, renderChart, validateObject } from '../src/helm-render.ts';
import { deployedServices, documentedSettings, loadServiceConfig, repo } from '../src/service-settings.ts';

const chartDir = join(repo, 'deploy', 'helm', 'platform');
const release = 'agents';
const namespace = 'platform';
const ingressNamespace = 'ingress-nginx';

/** deploy/helm/make-secrets.sh's manifests, as an operator pipes them to kubectl. */
function makeSecrets(out: string): KubeObject[] {
  const env = {
    PATH: process.env.PATH ?? '',
    PLATFORM_SECRET: 'helm-check-root-secret-0123456789abcdef',
    DATABASE_URL: 'postgres://platform:pw@db.example:5432/platform',
    RELEASE: release,
    OUT_DIR: out,
    PLATFORM_COMMAND: `${process.execPath} ${platformBin}`,
  };
  const run = spawnSync('sh', [join(repo, 'deploy', 'helm', 'make-secrets.sh')], { env, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return parseAllDocuments(run.stdout).map((document) => document.toJS() as KubeObject);
}

/** A container's environment as the kubelet gives it: its Secret's data, then `env` (fieldRefs resolved). */
function containerEnv(container: KubeObject, secrets: readonly KubeObject[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) Object.assign(env, secrets.find((secret) => secret.metadata.name === source.secretRef.name)?.stringData);
  for (const entry of container.env ?? []) env[entry.name] = entry.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace' ? namespace : entry.value;
  return env;
}

describe('deploy/helm/platform', () => {
  let objects: KubeObject[];
  let secrets: KubeObject[];
  let envDir: string;
  const of = (kind: string) => objects.filter((object) => object.kind === kind);
  const named = (kind: string, name: string) => of(kind).find((object) => object.metadata.name === name) as KubeObject;

  before(async () => {
    envDir = mkdtempSync(join(tmpdir(), 'helm-env-'));
    objects = await renderChart(chartDir, { release, namespace });
    secrets = makeSecrets(envDir);
  });
  after(() => rmSync(envDir, { recursive: true, force: true }));

  test("every rendered object, and every Secret make-secrets.sh makes, meets Kubernetes' OpenAPI schema of its kind", async () => {
    for (const object of [...objects, ...secrets]) await validateObject(object);
    const names = objects.map((object) => `${object.kind}/${object.metadata.name}`);
    assert.equal(new Set(names).size, names.length, 'no two objects of a kind share a name');
    await assert.rejects(validateObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'two' } }), /replicas/);
  });

  test('a Deployment per service, non-root, read-only, probed on /healthz, with resources; settlement Ready only as the sequencer', () => {
    assert.deepEqual(
      of('Deployment')
        .map((deployment) => deployment.metadata.name)
        .sort(),
      deployedServices.map((name) => `${release}-${name}`).sort(),
    );
    for (const name of deployedServices) {
      const deployment = named('Deployment', `${release}-${name}`);
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      assert.deepEqual(container.args, ['serve', name]);
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(container.securityContext.readOnlyRootFilesystem, true);
      assert.equal(pod.automountServiceAccountToken, name === 'router', `${name}: API credentials for the router only`);
      for (const probe of ['startupProbe', 'livenessProbe']) assert.equal(container[probe].httpGet.path, '/healthz', `${name} ${probe}`);
      if (name === 'settlement') assert.deepEqual(container.readinessProbe.exec.command.slice(1), ['/opt/platform/healthcheck.mjs', 'sequencer']);
      else assert.equal(container.readinessProbe.httpGet.path, '/healthz');
      assert.ok(container.resources.requests.memory && container.resources.limits.memory, `${name}: resources`);
      if (name === 'marketplace' || name === 'contracts') assert.equal(deployment.spec.strategy.type, 'Recreate', `${name}: never two at once`);
    }
    assert.equal(named('Deployment', `${release}-settlement`).spec.replicas, 2, 'a sequencer and a standby');
  });

  test("each service's settings are ones it documents and its own config parser takes them in production; the router's provider is kubernetes", async () => {
    for (const name of deployedServices) {
      const [container] = named('Deployment', `${release}-${name}`).spec.template.spec.containers;
      for (const source of container.envFrom)
        assert.ok(
          secrets.some((secret) => secret.metadata.name === source.secretRef.name),
          `${name}: ${source.secretRef.name} is made`,
        );
      const env = containerEnv(container, secrets);
      const documented = await documentedSettings(name);
      assert.deepEqual(
        Object.keys(env).filter((setting) => !documented.has(setting)),
        [],
        `${name}: settings its README does not name`,
      );
      const config = await loadServiceConfig(name, env);
      if ('production' in config) assert.equal(config.production, true, name);
    }
    const router = await loadServiceConfig('router', containerEnv(named('Deployment', `${release}-router`).spec.template.spec.containers[0], secrets));
    assert.equal(router.provider, 'kubernetes');
    assert.equal((router.kubernetes as { namespace: string }).namespace, namespace);
  });

  test('every address a service is given is a Service of the release on a port it serves, selecting that Deployment', () => {
    for (const service of of('Service')) {
      const deployment = of('Deployment').find((candidate) =>
        Object.entries(service.spec.selector).every(([key, value]) => candidate.spec.template.metadata.labels[key] === value),
      );
      assert.ok(deployment, `${service.metadata.name} selects a Deployment`);
      const ports = deployment.spec.template.spec.containers[0].ports.map((port: KubeObject) => port.name);
      for (const port of service.spec.ports) assert.ok(ports.includes(port.targetPort), `${service.metadata.name}: ${port.targetPort}`);
    }
    for (const deployment of of('Deployment'))
      for (const [setting, value] of Object.entries(containerEnv(deployment.spec.template.spec.containers[0], secrets)))
        for (const match of value.matchAll(/http:\/\/([a-z][a-z0-9-]*):(\d+)/g)) {
          const service = named('Service', match[1] as string);
          assert.ok(service, `${deployment.metadata.name} ${setting}: ${match[1]} is a Service of the release`);
          assert.ok(
            service.spec.ports.some((port: KubeObject) => port.port === Number(match[2])),
            `${deployment.metadata.name} ${setting}: port ${match[2]}`,
          );
        }
  });

  test('the Ingress serves the router’s public listener only (the connector’s callback when enabled), over TLS', async () => {
    const backends = (ingress: KubeObject) =>
      ingress.spec.rules[0].http.paths.map((path: KubeObject) => `${path.path} ${path.backend.service.name}:${path.backend.service.port.name}`);
    const [ingress] = of('Ingress');
    assert.deepEqual(backends(ingress as KubeObject), [`/ ${release}-router:http`]);
    assert.deepEqual(ingress?.spec.tls[0].hosts, ['agents.example.com']);
    const withCallback = (await renderChart(chartDir, { release, namespace, values: { ingress: { connectorCallback: true } } })).find(
      (object) => object.kind === 'Ingress',
    );
    assert.deepEqual(backends(withCallback as KubeObject), [`/v1/connect/callback ${release}-connector:http`, `/ ${release}-router:http`]);
  });

  test('NetworkPolicies: each pod is reached by its callers only; the daemons the router makes, by the router alone', async () => {
    const policies = of('NetworkPolicy');
    const labelsOf = (component: string) => ({
      'app.kubernetes.io/name': 'platform',
      'app.kubernetes.io/instance': release,
      'app.kubernetes.io/component': component,
    });
    const config = await loadServiceConfig('router', containerEnv(named('Deployment', `${release}-router`).spec.template.spec.containers[0], secrets));
    const daemon = statefulSetFor(config.kubernetes as never, randomUUID(), 8080).spec.template.metadata.labels;
    const pods: Record<string, Record<string, string>> = { daemon, ...Object.fromEntries(deployedServices.map((name) => [name, labelsOf(name)])) };
    const peer = (labels: Record<string, string>, from = namespace) => ({ namespace: from, namespaceLabels: { 'kubernetes.io/metadata.name': from }, labels });
    const reach = (from: string, to: string, port = 8080) =>
      allowed(policies, { namespace, labels: pods[to] as Record<string, string> }, peer(pods[from] as Record<string, string>), port);
    const outside = peer({ app: 'nginx' }, ingressNamespace);
    const callers: Record<string, string[]> = {
      scheduler: ['daemon', 'router'],
      settlement: ['daemon', 'router', 'marketplace'],
      marketplace: ['daemon', 'router'],
      gateway: ['daemon', 'router'],
      memory: ['daemon'],
      contracts: ['daemon'],
      connector: ['daemon'],
      daemon: ['router'],
    };
    for (const [to, expected] of Object.entries(callers)) {
      const reaching = Object.keys(pods).filter((from) => from !== to && reach(from, to));
      assert.deepEqual(reaching.sort(), expected.sort(), `who reaches ${to}`);
      assert.equal(
        allowed(policies, { namespace, labels: pods[to] as Record<string, string> }, outside, 8080),
        false,
        `the ingress controller does not reach ${to}`,
      );
    }
    assert.equal(
      allowed(policies, { namespace, labels: pods.router as Record<string, string> }, outside, 8080),
      true,
      'the ingress controller reaches the public listener',
    );
    assert.equal(allowed(policies, { namespace, labels: pods.router as Record<string, string> }, outside, 8081), false, 'and not the private one');
    assert.deepEqual(
      Object.keys(pods).filter((from) => from !== 'router' && reach(from, 'router', 8081)),
      ['scheduler'],
      'the wake route: the scheduler alone',
    );
  });

  test('PodDisruptionBudgets for every service but settlement; the router may do what its provider does, and no more', () => {
    const budgets = of('PodDisruptionBudget').map((budget) => budget.spec.selector.matchLabels['app.kubernetes.io/component']);
    assert.deepEqual(budgets.sort(), deployedServices.filter((name) => name !== 'settlement').sort());
    const role = named('Role', `${release}-router`);
    const grants = new Set<string>(
      role.rules.flatMap((rule: KubeObject) => rule.resources.flatMap((resource: string) => rule.verbs.map((verb: string) => `${verb} ${resource}`))),
    );
    // The calls of services/router/src/environments/kubernetes-provider.ts (replace is an update).
    const calls = ['create secrets', 'update secrets', 'delete secrets', 'create persistentvolumeclaims', 'delete persistentvolumeclaims'];
    calls.push('create statefulsets', 'get statefulsets', 'delete statefulsets', 'get statefulsets/scale', 'patch statefulsets/scale', 'get pods');
    for (const call of calls) assert.ok(grants.has(call), call);
    assert.ok(!grants.has('list secrets') && !grants.has('create pods'), 'nothing beyond');
    assert.equal(named('RoleBinding', `${release}-router`).subjects[0].name, named('Deployment', `${release}-router`).spec.template.spec.serviceAccountName);
  });
});
