import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { ManualClock } from '@platform/testkit/manual-clock';
import type { EnvironmentProvider, EnvironmentUser } from '../src/environments/provider.ts';
import { UsersRepository } from '../src/users/users.repository.ts';
import { type IdentityProvider, invite, startIdentityProvider, startRouter } from './harness.ts';

/**
 * A provider whose API is as slow as the test says: `ensure` (provisioning) finishes only when the test releases it.
 * Its environments are one small server that answers like a daemon, so what is measured is the router's waiting.
 */
async function slowProvider() {
  const daemon = await listenOnFreePort(
    createServer((request, response) => {
      const user = request.headers['x-platform-user-id'];
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, data: { user_id: user, path: request.url } }));
    }),
  );
  const address = `http://127.0.0.1:${daemon.port}`;
  let release: () => void = () => {};
  let released = Promise.resolve();
  const running = new Set<string>();
  const counts = { ensure: 0 };
  let failing = false;
  const provider: EnvironmentProvider = {
    name: 'process',
    async ensure(user: EnvironmentUser) {
      counts.ensure++;
      await released;
      if (failing) throw new Error('the provider API answered 500');
      return { environmentId: `slow:${user.id}`, address: null, volume: `volume-${user.id}` };
    },
    start: async (user) => void running.add(user.id),
    stop: async (user) => void running.delete(user.id),
    destroy: async (user) => void running.delete(user.id),
    address: async (user) => (running.has(user.id) ? address : undefined),
    state: async (user) => (running.has(user.id) ? 'running' : 'stopped'),
    running: () => [...running],
    close: async () => {},
  };
  return {
    provider,
    counts,
    /** From now on provisioning waits until `release()`. */
    hold() {
      released = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
    /** Provisioning fails (the provider's API does) until told otherwise. */
    fail(yes: boolean) {
      failing = yes;
    },
    close: () => daemon.close(),
  };
}

for (const engine of testEngines()) {
  describe(`requests while a user is provisioned, with a slow provider, on ${engine.name}`, () => {
    let idp: IdentityProvider;
    let slow: Awaited<ReturnType<typeof slowProvider>>;
    let router: Awaited<ReturnType<typeof startRouter>>;
    const clock = new ManualClock(new Date());

    before(async () => {
      idp = await startIdentityProvider();
      slow = await slowProvider();
      router = await startRouter(engine, idp, { clock, provider: () => slow.provider, env: { ROUTER_MAX_WAITERS: '3', ROUTER_WAKE_TIMEOUT: '30s' } });
    });
    after(async () => {
      slow?.release();
      await router?.dispose();
      await slow?.close();
      await idp?.close();
    });

    // The provider's tokens say not-before 10 s before they are issued; the manual clock starts from now for each test.
    const token = (sub: string) => {
      clock.set(new Date());
      return idp.token({ sub });
    };

    test('while POST /admin/users provisions a user, their requests are answered 503 with Retry-After at once, not held', async () => {
      const sub = randomUUID();
      const bearer = await token(sub);
      slow.hold();
      const created = router.admin('POST', '/admin/users', { idp_user_id: sub });
      await eventually(() => slow.counts.ensure === 1, 'the provider is asked for the environment');
      const answers = await Promise.all([router.call('GET', '/me', bearer), router.call('GET', '/conversations', bearer)]);
      for (const answer of answers) {
        assert.deepEqual([answer.status, answer.json.error.code, answer.headers.get('retry-after')], [503, 'unavailable', '5']);
        assert.match(answer.json.error.message, /being prepared; retry shortly/);
      }
      slow.release();
      assert.equal((await created).status, 201);
      const served = await router.call('GET', '/me', bearer);
      assert.deepEqual([served.status, served.json.data.user_id], [200, sub]);
    });

    test('the first requests after an invite wait for its provisioning, but never past ROUTER_WAKE_TIMEOUT (injected clock)', async () => {
      const sub = randomUUID();
      const bearer = await token(sub);
      await invite(router, bearer);
      const provisioned = slow.counts.ensure;
      slow.hold();
      const first = router.call('GET', '/me', bearer);
      await eventually(() => router.router.deps.access.waiting(sub) === 1, 'the first request waits for the provisioning');
      clock.advance(29_999);
      const second = router.call('GET', '/me', bearer);
      await eventually(() => router.router.deps.access.waiting(sub) === 2, 'a second request joins it');
      clock.advance(1);
      const late = await first;
      assert.deepEqual([late.status, late.json.error.code, late.headers.get('retry-after')], [503, 'unavailable', '5']);
      assert.match(late.json.error.message, /ROUTER_WAKE_TIMEOUT/);
      assert.equal(router.router.deps.access.waiting(sub), 1, 'the second still waits: its 30 s are not over');
      slow.release();
      const served = await second;
      assert.deepEqual([served.status, served.json.data.user_id], [200, sub]);
      assert.equal(slow.counts.ensure - provisioned, 1, 'provisioned once');
    });

    test('past ROUTER_MAX_WAITERS, requests for a user being provisioned are refused at once with Retry-After', async () => {
      const sub = randomUUID();
      const bearer = await token(sub);
      await invite(router, bearer);
      slow.hold();
      const pending = Array.from({ length: 5 }, () => router.call('GET', '/me', bearer));
      await eventually(() => router.router.deps.access.waiting(sub) === 3, 'three wait');
      const settled: number[] = [];
      for (const answer of pending) void answer.then((done) => settled.push(done.status));
      await eventually(() => settled.length === 2, 'two are answered without waiting');
      assert.deepEqual(settled, [503, 503]);
      slow.release();
      const answers = await Promise.all(pending);
      assert.equal(answers.filter((answer) => answer.status === 200).length, 3, 'the three that waited are served');
      for (const answer of answers.filter((answer) => answer.status === 503)) {
        assert.equal(answer.headers.get('retry-after'), '2');
        assert.match(answer.json.error.message, /ROUTER_MAX_WAITERS/);
      }
    });

    test('a provider that fails to provision: 503 with Retry-After, not 500, for the user and for the admin', async () => {
      const sub = randomUUID();
      const bearer = await token(sub);
      await invite(router, bearer);
      slow.fail(true);
      try {
        const refused = await router.call('GET', '/me', bearer);
        assert.deepEqual([refused.status, refused.json.error.code, refused.headers.get('retry-after')], [503, 'unavailable', '5']);
        assert.match(refused.json.error.message, /could not be prepared/);
        const admin = await router.admin('POST', '/admin/users', { idp_user_id: randomUUID() });
        assert.deepEqual([admin.status, admin.json.error.code, admin.headers.get('retry-after')], [503, 'unavailable', '5']);
      } finally {
        slow.fail(false);
      }
    });

    test('a provisioning left unfinished by another instance for 5 minutes is taken over by the user’s next request', async () => {
      const sub = randomUUID();
      const bearer = await token(sub);
      const elsewhere = new UsersRepository(router.database.db, new ManualClock(new Date(clock.now().getTime() - 5 * 60_000 - 1_000)));
      await elsewhere.claimProvisioning(sub, {}, 'process', 'local');
      const served = await router.call('GET', '/me', bearer);
      assert.deepEqual([served.status, served.json.data?.user_id], [200, sub], served.text);
      assert.equal((await router.router.deps.users.get(sub))?.state, 'active');
    });
  });
}
