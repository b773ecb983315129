import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { memoryOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { freePort } from '@platform/kit/free-port';
import { testEngines } from '@platform/testkit/databases';
import { ManualClock } from '@platform/testkit/manual-clock';
import { daemonSecrets } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { environmentName } from '../src/environments/kubernetes-objects.ts';
import { KubernetesProvider } from '../src/environments/kubernetes-provider.ts';
import { daemonLaunch } from '../src/main.ts';
import { adminToken, daemonRoot, type IdentityProvider, ipv6Loopback, startIdentityProvider, startRouter, wakeToken } from './harness.ts';
import { startKubernetesStandIn } from './kubernetes-stand-in.ts';

const apiToken = 'kubernetes-api-token-for-tests';
const memoryRoot = 'memory-root-token-for-kubernetes-tests';
const namespace = 'platform-daemons';
const ipv6 = await ipv6Loopback();

for (const engine of testEngines())
  describe(`the kubernetes provider against a server speaking the Kubernetes API (${engine.name})`, () => {
    let idp: IdentityProvider;
    let cluster: Awaited<ReturnType<typeof startKubernetesStandIn>>;
    let router: Awaited<ReturnType<typeof startRouter>>;
    let env: Record<string, string>;

    before(async () => {
      idp = await startIdentityProvider();
      cluster = await startKubernetesStandIn({ namespace, token: apiToken, ipv6, ...daemonLaunch });
      env = {
        ROUTER_PROVIDER: 'kubernetes',
        K8S_API_URL: cluster.url,
        K8S_API_TOKEN: apiToken,
        K8S_NAMESPACE: namespace,
        K8S_DAEMON_IMAGE: 'ghcr.io/example/platform:test',
        K8S_DAEMON_LABELS: 'app.kubernetes.io/instance=platform',
        K8S_STORAGE_CLASS: 'fast',
        ROUTER_DAEMON_PORT: String(await freePort()),
        PLATFORM_GATEWAY_URL: 'http://127.0.0.1:9/v1',
        MEMORY_MCP_TOKEN: memoryRoot,
      };
      router = await startRouter(engine, idp, { env });
    });
    after(async () => {
      await router?.dispose();
      await cluster?.close();
      await idp?.close();
    });

    test('provisioning makes a Secret, a claim and a StatefulSet at zero; requests scale it to one, probe the pod IP and forward', async (t) => {
      if (!ipv6) t.diagnostic('this machine has no IPv6 loopback (::1): the pods got IPv4 addresses, so IPv6 was not tried');
      const sub = randomUUID();
      const created = await router.admin('POST', '/admin/users', { idp_user_id: sub });
      assert.equal(created.status, 201, created.text);
      const environment = created.json.data.environment;
      const name = environmentName(sub);
      assert.deepEqual([environment.provider, environment.id, environment.volume, environment.status], ['kubernetes', `${namespace}/${name}`, name, 'stopped']);
      const set = cluster.stores.statefulsets.get(name);
      assert.ok(set, 'the StatefulSet');
      assert.equal(set.spec.replicas, 0, 'created stopped: the first request starts it');
      const pod = set.spec.template;
      assert.equal(pod.metadata.labels['app.kubernetes.io/instance'], 'platform', 'K8S_DAEMON_LABELS reach the pods (the NetworkPolicies select them)');
      const container = pod.spec.containers[0];
      assert.equal(container.image, 'ghcr.io/example/platform:test');
      assert.deepEqual(container.args, ['daemon']);
      assert.equal(pod.spec.automountServiceAccountToken, false, 'a daemon gets no API credentials');
      const settings = Object.fromEntries(container.env.map((entry: { name: string; value: string }) => [entry.name, entry.value]));
      assert.deepEqual([settings.DAEMON_USER_ID, settings.DATA_DIR, settings.PLATFORM_GATEWAY_URL], [sub, '/data', 'http://127.0.0.1:9/v1']);
      assert.equal(cluster.stores.persistentvolumeclaims.get(name)?.spec.storageClassName, 'fast');
      const secret = cluster.stores.secrets.get(name)?.stringData;
      assert.match(secret.PLATFORM_DAEMON_TOKEN, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(new OwnerTokens(memoryRoot, memoryOwnerTokens).verify(secret.MEMORY_MCP_TOKEN), { ok: true, owner: sub }, 'its own user’s memory token');
      const everything = JSON.stringify([set, secret]);
      for (const root of [adminToken, wakeToken, apiToken, memoryRoot, daemonRoot])
        assert.ok(!everything.includes(root), 'no root or router secret reaches a daemon');

      const token = await idp.token({ sub });
      const answers = await Promise.all(Array.from({ length: 20 }, () => router.call('GET', '/me', token)));
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array(20).fill(200),
      );
      assert.equal(answers[0]?.json.data.user_id, sub);
      const scaled = cluster.requests.filter((request) => request.method === 'PATCH' && request.path.endsWith(`/statefulsets/${name}/scale`));
      assert.equal(scaled.length, 1, '20 requests to a stopped daemon scale it once');
      const running = cluster.pods.get(`${name}-0`);
      if (ipv6) assert.equal(running?.ip, '::1', 'reached at an IPv6 pod address');

      // A second user beside the first: its pod is at an IPv4 address.
      const other = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: other });
      assert.equal((await router.call('GET', '/me', await idp.token({ sub: other }))).status, 200);
      assert.match(cluster.pods.get(`${environmentName(other)}-0`)?.ip ?? '', /^127\.0\.0\.\d+$/);
      assert.equal((await router.admin('GET', `/admin/users/${sub}`)).json.data.environment.status, 'running');

      const suspended = await router.admin('POST', `/admin/users/${sub}/suspend`);
      assert.equal(suspended.json.data.environment.status, 'stopped');
      assert.equal(cluster.stores.statefulsets.get(name)?.spec.replicas, 0);
      assert.equal(cluster.pods.has(`${name}-0`), false, 'the pod is gone (its daemon drained on SIGTERM)');
      await router.admin('POST', `/admin/users/${sub}/restore`);
      assert.equal((await router.call('GET', '/me', token)).status, 200, 'started again, on the same claim');
      assert.equal((await router.call('GET', '/conversations', token)).status, 200);

      await router.admin('DELETE', `/admin/users/${sub}`);
      for (const kind of ['statefulsets', 'persistentvolumeclaims', 'secrets'] as const)
        assert.equal(cluster.stores[kind].has(name), false, `the ${kind} is deleted`);
      assert.equal(cluster.pods.has(`${name}-0`), false);
    });

    test('a router that stopped half way resumes: ensure reuses what exists, start finds a pod already running, stop and destroy twice are fine', async () => {
      const config = loadConfig(env, daemonLaunch);
      const clock = new ManualClock(new Date());
      const secretsFor = daemonSecrets({ daemonTokenRoot: daemonRoot, ownerTokenRoots: config.ownerTokenRoots });
      const provider = () =>
        new KubernetesProvider(config.kubernetes!, { secretsFor, daemonPort: config.daemonPort, clock, pollMs: 20, logger: router.router.deps.logger });
      const user = { id: randomUUID(), region: 'local', environmentId: null, volume: null };
      const name = environmentName(user.id);
      const first = provider();
      await first.ensure(user);
      // The first router made everything and crashed before recording it; a claim alone (a crash after the Secret and
      // the claim) is covered by the same path, each object being made only when absent.
      cluster.stores.statefulsets.delete(name);
      const again = await provider().ensure(user);
      assert.deepEqual(again, await first.ensure(user));
      assert.equal(cluster.stores.statefulsets.get(name)?.spec.replicas, 0);
      await first.start(user);
      assert.equal(await first.state(user), 'running');
      const patches = () => cluster.requests.filter((request) => request.method === 'PATCH' && request.path.endsWith(`/${name}/scale`)).length;
      const before = patches();
      const restarted = provider();
      assert.equal(await restarted.address(user), undefined, 'a new router knows no address until it starts');
      await restarted.start(user);
      assert.equal(patches(), before, 'a set already at one replica is not scaled again');
      const address = await restarted.address(user);
      assert.ok(address?.endsWith(`:${config.daemonPort}`));

      await cluster.reschedule(name);
      assert.equal(await restarted.address(user), address, 'read from memory within 10 s');
      clock.advance(10_000);
      const moved = await restarted.address(user);
      assert.notEqual(moved, address, 'a pod the cluster moved is found at its new IP');
      assert.equal(moved, `http://${cluster.pods.get(`${name}-0`)?.ip}:${config.daemonPort}`);

      await restarted.stop(user);
      await restarted.stop(user);
      assert.equal(await restarted.state(user), 'stopped');
      await restarted.destroy(user);
      await restarted.destroy(user);
      assert.equal(await restarted.state(user), 'absent');
    });

    test('settings: K8S_DAEMON_IMAGE is required, quantities and labels are checked, naming the setting', () => {
      const base = { ROUTER_PROVIDER: 'kubernetes', K8S_DAEMON_IMAGE: 'image', K8S_NAMESPACE: 'ns' };
      assert.throws(() => loadConfig({ ROUTER_PROVIDER: 'kubernetes' }, daemonLaunch), /K8S_DAEMON_IMAGE is required/);
      assert.throws(() => loadConfig({ ...base, K8S_VOLUME_SIZE: 'big' }, daemonLaunch), /K8S_VOLUME_SIZE must be a Kubernetes quantity/);
      assert.throws(() => loadConfig({ ...base, K8S_DAEMON_LABELS: 'a=b=c' }, daemonLaunch), /K8S_DAEMON_LABELS must be key=value/);
      assert.throws(() => loadConfig({ ...base, K8S_NAMESPACE: 'Not_A_Namespace' }, daemonLaunch), /K8S_NAMESPACE must be a namespace name/);
      assert.throws(() => loadConfig({ ...base, K8S_API_TOKEN: 'x' }, daemonLaunch), /K8S_API_TOKEN is for K8S_API_URL/);
      assert.throws(() => loadConfig({ ROUTER_PROVIDER: 'nomad' }, daemonLaunch), /ROUTER_PROVIDER must be process, fly or kubernetes/);
      const config = loadConfig({ ...base, K8S_DAEMON_LABELS: 'app.kubernetes.io/instance=prod, team=agents' }, daemonLaunch);
      assert.deepEqual(config.kubernetes?.podLabels, { 'app.kubernetes.io/instance': 'prod', team: 'agents' });
      assert.deepEqual([config.kubernetes?.volumeSize, config.kubernetes?.memory, config.kubernetes?.storageClass], ['1Gi', '256Mi', undefined]);
    });

    test('names: a UUID keeps its name, any other id a digest, always a DNS label with room for the pod suffix', () => {
      const id = randomUUID();
      assert.equal(environmentName(id), `daemon-${id}`);
      for (const odd of ['User.With_Caps', 'x'.repeat(100), 'ü']) assert.match(environmentName(odd), /^daemon-[0-9a-f]{32}$/);
    });
  });
