import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { memoryOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { freePort } from '@platform/kit/free-port';
import { testEngines } from '@platform/testkit/databases';
import { daemonLaunch } from '../src/main.ts';
import { startFlyStandIn } from './fly-stand-in.ts';
import { adminToken, type IdentityProvider, ipv6Loopback, startIdentityProvider, startRouter, wakeToken } from './harness.ts';

const [pglite] = testEngines();
const flyToken = 'fly-api-token-for-tests';
const memoryRoot = 'memory-root-token-for-fly-tests';
// Fly's private network is IPv6: the machines' addresses are too, unless this machine has no IPv6 at all.
const privateIps = (await ipv6Loopback()) ? 'ipv6' : 'ipv4';

describe('the fly provider against a server speaking the Machines API', () => {
  let idp: IdentityProvider;
  let fly: Awaited<ReturnType<typeof startFlyStandIn>>;
  let router: Awaited<ReturnType<typeof startRouter>>;
  let codyPort: number;

  before(async () => {
    idp = await startIdentityProvider();
    fly = await startFlyStandIn({ appName: 'platform-daemons', token: flyToken, privateIps, ...daemonLaunch });
    codyPort = await freePort();
    router = await startRouter(pglite!, idp, {
      env: {
        ROUTER_PROVIDER: 'fly',
        FLY_API_URL: fly.url,
        FLY_API_TOKEN: flyToken,
        FLY_APP_NAME: 'platform-daemons',
        FLY_DAEMON_IMAGE: 'registry.fly.io/platform-daemon:test',
        ROUTER_DAEMON_PORT: String(await freePort()),
        ROUTER_CODY_PORT: String(codyPort),
        PLATFORM_GATEWAY_URL: 'http://127.0.0.1:9/v1',
        MEMORY_MCP_TOKEN: memoryRoot,
      },
    });
  });
  after(async () => {
    await router?.dispose();
    await fly?.close();
    await idp?.close();
  });

  test('provisioning creates a volume and a stopped machine; a request starts it, waits for started, probes, forwards', async (t) => {
    if (privateIps === 'ipv4') t.diagnostic('this machine has no IPv6 loopback (::1): the machines got IPv4 addresses, so IPv6 was not tried');
    const sub = randomUUID();
    const created = await router.admin('POST', '/admin/users', { idp_user_id: sub, region: 'ams' });
    assert.equal(created.status, 201, created.text);
    const environment = created.json.data.environment;
    assert.equal(environment.provider, 'fly');
    assert.equal(environment.status, 'stopped');
    const machine = fly.machines.get(environment.id);
    assert.ok(machine, 'the machine the row names');
    assert.deepEqual(machine.config.mounts, [{ volume: environment.volume, path: '/data' }]);
    assert.equal(machine.config.image, 'registry.fly.io/platform-daemon:test');
    assert.equal(machine.region, 'ams');
    assert.equal(machine.config.env.DAEMON_USER_ID, sub);
    assert.equal(machine.config.env.PLATFORM_GATEWAY_URL, 'http://127.0.0.1:9/v1', 'the daemons’ settings are passed');
    assert.match(machine.config.env.PLATFORM_DAEMON_TOKEN ?? '', /^[A-Za-z0-9_-]{43}$/);
    const settings = JSON.stringify(machine.config.env);
    for (const secret of [adminToken, wakeToken, flyToken, memoryRoot]) assert.ok(!settings.includes(secret), 'no router secret reaches a machine');
    const memoryToken = new OwnerTokens(memoryRoot, memoryOwnerTokens).verify(machine.config.env.MEMORY_MCP_TOKEN ?? '');
    assert.deepEqual(memoryToken, { ok: true, owner: sub }, "the machine holds its own user's memory token");

    const token = await idp.token({ sub });
    const me = await router.call('GET', '/me', token);
    assert.equal(me.status, 200, me.text);
    assert.equal(me.json.data.user_id, sub);
    assert.notEqual(me.headers.get('x-platform-cold-start-ms'), null);
    assert.equal(machine.state, 'started');
    if (privateIps === 'ipv6') assert.equal(machine.private_ip, '::1', 'reached at its IPv6 private address, as on Fly');
    assert.equal((await router.call('GET', '/conversations', token)).status, 200, 'and again, now that it is known to answer');

    // The code engine beside the daemon, at the same private address on its own port.
    const cody = createServer((request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: request.url })));
    await new Promise<void>((resolve) => cody.listen(codyPort, machine.private_ip, resolve));
    try {
      const engine = await router.call('GET', '/cody/v1/status?x=1', token);
      assert.deepEqual([engine.status, engine.json?.url], [200, '/v1/status?x=1'], engine.text);
    } finally {
      cody.closeAllConnections();
      await new Promise((resolve) => cody.close(resolve));
    }
    const calls = fly.requests.map((request) => `${request.method} ${request.path.replace(environment.id, ':id')}`);
    assert.ok(calls.includes('POST /v1/apps/platform-daemons/machines/:id/start'));
    assert.ok(calls.includes('GET /v1/apps/platform-daemons/machines/:id/wait'));

    const suspended = await router.admin('POST', `/admin/users/${sub}/suspend`);
    assert.equal(suspended.json.data.environment.status, 'stopped');
    assert.equal(machine.state, 'stopped');
    await router.admin('POST', `/admin/users/${sub}/restore`);
    assert.equal((await router.call('GET', '/me', token)).status, 200, 'started again');
    await router.admin('DELETE', `/admin/users/${sub}`);
    assert.equal(machine.state, 'destroyed');
    assert.equal(fly.volumes.has(environment.volume), false, 'the volume is deleted');
  });

  test('a provisioning that stopped half way reuses what exists: the same volume and machine by name', async () => {
    const sub = randomUUID();
    const provider = router.router.deps.provider;
    const first = await provider.ensure({ id: sub, region: 'iad', environmentId: null, volume: null });
    const again = await provider.ensure({ id: sub, region: 'iad', environmentId: null, volume: null });
    assert.deepEqual(again, first);
  });
});
