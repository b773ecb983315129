import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '@platform/kit/db/open-database';
import { postgresEngine, testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { ManualClock } from '@platform/testkit/manual-clock';
import { sampleValue } from '@platform/testkit/metrics-text';
import { countingProvider, type IdentityProvider, invite, startIdentityProvider, startRouter } from './harness.ts';

const [pglite] = testEngines();
const neverReady = fileURLToPath(new URL('./fixtures/never-ready.mjs', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('waking environments', () => {
  let idp: IdentityProvider;
  before(async () => {
    idp = await startIdentityProvider();
  });
  after(async () => {
    await idp?.close();
  });

  test('200 concurrent requests to a stopped environment: one start, every one answered, cold starts counted', async () => {
    let counts: ReturnType<typeof countingProvider>['counts'] | undefined;
    const router = await startRouter(pglite!, idp, {
      provider: (base) => {
        const counting = countingProvider(base);
        counts = counting.counts;
        return counting.provider;
      },
    });
    try {
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const token = await idp.token({ sub });
      const answers = await Promise.all(Array.from({ length: 200 }, () => router.call('GET', '/healthz-of-daemon-is-not-this', token)));
      assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([404]), 'every request reached the daemon (its 404)');
      assert.equal(counts?.start, 1);
      const stats = router.router.deps.wake.stats();
      assert.equal(stats.count, 1);
      assert.ok((stats.p50_ms ?? 0) > 0);
    } finally {
      await router.dispose();
    }
  });

  test('past ROUTER_MAX_WAITERS the answer is 503 with Retry-After, and the ones waiting are served', async () => {
    const router = await startRouter(pglite!, idp, { env: { ROUTER_MAX_WAITERS: '5' } });
    try {
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const token = await idp.token({ sub });
      const answers = await Promise.all(Array.from({ length: 30 }, () => router.call('GET', '/me', token)));
      const served = answers.filter((answer) => answer.status === 200);
      const refused = answers.filter((answer) => answer.status === 503);
      assert.equal(served.length + refused.length, 30);
      assert.ok(served.length >= 5 && refused.length >= 1, `${served.length} served, ${refused.length} refused`);
      for (const answer of refused) {
        assert.equal(answer.headers.get('retry-after'), '2');
        assert.match(answer.json.error.message, /ROUTER_MAX_WAITERS/);
      }
    } finally {
      await router.dispose();
    }
  });

  test('an environment that never becomes ready: 503 with Retry-After at ROUTER_WAKE_TIMEOUT on the injected clock, never a hang, counted as a timeout', async () => {
    const clock = new ManualClock(new Date());
    const metricsToken = 'router-metrics-token-for-tests';
    const router = await startRouter(pglite!, idp, { clock, env: { ROUTER_DAEMON_ENTRY: neverReady, PLATFORM_METRICS_TOKEN: metricsToken } });
    try {
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const pending = router.call('GET', '/me', await idp.token({ sub }));
      await eventually(() => router.router.deps.wake.waiting(sub) === 1, 'the request waits for the wake');
      clock.advance(30_000);
      const answer = await pending;
      assert.deepEqual([answer.status, answer.json.error.code, answer.headers.get('retry-after')], [503, 'unavailable', '5']);
      assert.match(answer.json.error.message, /did not become ready within 30000 ms/);
      assert.equal(router.router.deps.wake.stats().failures, 1);
      const metrics = (await httpCall(router.internalUrl, 'GET', '/metrics', { bearer: metricsToken })).text;
      assert.equal(sampleValue(metrics, 'router_wakes_total', { outcome: 'timeout' }), 1);
      assert.equal(sampleValue(metrics, 'router_wakes_total', { outcome: 'ready' }), 0);
      assert.equal(sampleValue(metrics, 'router_cold_starts_total'), 0);
      assert.equal(sampleValue(metrics, 'router_wake_duration_seconds_count'), 0, 'only wakes that became ready are timed');
    } finally {
      await router.dispose();
    }
  });

  test('an environment being woken is not idle: the reaper leaves it to the request waiting for it, and reaps it once the request is over', async () => {
    const clock = new ManualClock(new Date());
    const router = await startRouter(pglite!, idp, { clock, env: { ROUTER_DAEMON_ENTRY: neverReady } });
    try {
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const pending = router.call('GET', '/me', await idp.token({ sub }));
      await eventually(() => router.router.deps.wake.waiting(sub) === 1, 'the request waits for the wake');
      // Never seen before, so idle by the clock: yet a request is waiting for this environment to come up.
      assert.deepEqual(await router.router.reaper.reap(clock.now().getTime() + 16 * 60_000), [], 'not stopped while it is being woken');
      assert.deepEqual(router.router.deps.provider.running(), [sub]);
      clock.advance(30_000);
      assert.equal((await pending).status, 503);
      assert.deepEqual(await router.router.reaper.reap(clock.now().getTime() + 16 * 60_000), [sub], 'idle once nobody waits');
    } finally {
      await router.dispose();
    }
  });

  test('an idle environment is stopped and started again by the next request; a router restart adopts a running daemon', async () => {
    const first = await startRouter(pglite!, idp, { env: { ROUTER_STOP_DAEMONS_ON_EXIT: 'false' } });
    const sub = randomUUID();
    const token = await idp.token({ sub });
    await invite(first, token);
    assert.equal((await first.call('GET', '/me', token)).status, 200);
    const volume = (await first.admin('GET', `/admin/users/${sub}`)).json.data.environment.volume;
    const pid = () => JSON.parse(readFileSync(join(volume, 'router-run.json'), 'utf8')).pid as number;
    const before = pid();
    assert.deepEqual(await first.router.reaper.reap(Date.now() + 60_000), [], 'not idle yet');
    assert.deepEqual(await first.router.reaper.reap(Date.now() + 16 * 60_000), [sub], 'idle past 15 minutes');
    assert.equal(alive(before), false, 'the daemon process is gone');
    const again = await first.call('GET', '/me', token);
    assert.equal(again.status, 200);
    assert.notEqual(again.headers.get('x-platform-cold-start-ms'), null, 'started again');
    const running = pid();
    assert.notEqual(running, before);

    await first.stop();
    assert.equal(alive(running), true, 'the daemon outlives the router when told to');
    const second = await startRouter(pglite!, idp, { database: first.database, volumes: first.volumes });
    try {
      assert.equal((await second.call('GET', '/me', token)).status, 200);
      assert.equal(pid(), running, 'adopted, not started twice');
      assert.deepEqual(second.router.deps.provider.running(), [sub]);
    } finally {
      await second.dispose();
      await first.dispose();
    }
    assert.equal(alive(running), false, 'stopped with the second router');
  });
});

const postgres = postgresEngine();
describe('two router instances on one PostgreSQL database', { skip: postgres === undefined }, () => {
  test('concurrent provisioning of one user through both: exactly one provisions', async () => {
    const fresh = await postgres!.fresh();
    const idp = await startIdentityProvider();
    const counters: ReturnType<typeof countingProvider>['counts'][] = [];
    const counted = (base: Parameters<typeof countingProvider>[0]) => {
      const counting = countingProvider(base);
      counters.push(counting.counts);
      return counting.provider;
    };
    const a = await startRouter(postgres!, idp, { provider: counted, database: await openDatabase({ ...fresh.options, schema: fresh.options.schema }) });
    const b = await startRouter(postgres!, idp, {
      provider: counted,
      database: await openDatabase({ ...fresh.options, schema: fresh.options.schema }),
      volumes: a.volumes,
    });
    try {
      const sub = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? a : b).admin('POST', '/admin/users', { idp_user_id: sub })),
      );
      assert.equal(
        counters.reduce((sum, counts) => sum + counts.ensure, 0),
        1,
        'one provisioning across both',
      );
      assert.ok(answers.every((answer) => answer.status === 200 || answer.status === 201));
      assert.equal(answers.filter((answer) => answer.status === 201).length >= 1, true);
      const row = await a.admin('GET', `/admin/users/${sub}`);
      assert.equal(row.json.data.state, 'active');
    } finally {
      await a.stop();
      await b.stop();
      await a.database.close();
      await b.database.close();
      await fresh.dispose();
      await idp.close();
      rmSync(a.volumes, { recursive: true, force: true });
    }
  });
});
