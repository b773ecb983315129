import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { assertBoundedLabels, sampleValue } from '@platform/testkit/metrics-text';
import type { EnvironmentProvider } from '../src/environments/provider.ts';
import { adminToken, type IdentityProvider, startIdentityProvider, startRouter, wakeBody, wakeToken } from './harness.ts';

const metricsToken = 'router-metrics-token-for-tests';
const env = { PLATFORM_METRICS_TOKEN: metricsToken };

/** The real provider, whose starts the test can hold (to see who waits) or make fail. */
function holdableProvider(base: EnvironmentProvider) {
  let held: Promise<void> = Promise.resolve();
  let release = () => {};
  let failing = false;
  const provider: EnvironmentProvider = {
    name: base.name,
    ensure: (user) => base.ensure(user),
    stop: (user) => base.stop(user),
    destroy: (user) => base.destroy(user),
    address: (user) => base.address(user),
    state: (user) => base.state(user),
    running: () => base.running(),
    close: () => base.close(),
    async start(user) {
      await held;
      if (failing) throw new Error('the provider API answered 500');
      return base.start(user);
    },
  };
  return {
    provider,
    hold() {
      held = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
    fail: (yes: boolean) => {
      failing = yes;
    },
  };
}

const scrape = (url: string, path = '/metrics', bearer: string | null = metricsToken) => httpCall(url, 'GET', path, { bearer });

for (const engine of testEngines()) {
  describe(`router metrics (${engine.name})`, () => {
    let idp: IdentityProvider;
    let router: Awaited<ReturnType<typeof startRouter>>;
    let control: ReturnType<typeof holdableProvider>;
    before(async () => {
      idp = await startIdentityProvider();
      router = await startRouter(engine, idp, {
        env,
        provider: (base) => {
          control = holdableProvider(base);
          return control.provider;
        },
      });
    });
    after(async () => {
      await router?.dispose();
      await idp?.close();
    });

    test('a woken environment, the requests that waited for it and their proxying are counted; labels stay bounded', async () => {
      const sub = randomUUID();
      assert.equal((await router.admin('POST', '/admin/users', { idp_user_id: sub })).status, 201);
      const before = (await scrape(router.internalUrl)).text;
      assert.equal(sampleValue(before, 'router_environments', { state: 'active' }), 1);
      assert.equal(sampleValue(before, 'router_environments', { state: 'running' }), 0);
      assert.equal(sampleValue(before, 'router_wakes_total', { outcome: 'ready' }), 0, 'every outcome is there from the start');
      assert.equal(sampleValue(before, 'router_proxy_duration_seconds_count', { target: 'daemon' }), 0);

      control.hold();
      const token = await idp.token({ sub });
      const answers = Array.from({ length: 3 }, () => router.call('GET', '/me', token));
      await eventually(() => router.router.deps.wake.waiting(sub) === 3, 'three requests wait for the wake');
      const waiting = (await scrape(router.internalUrl)).text;
      assert.equal(sampleValue(waiting, 'router_waiters'), 3);
      assert.equal(sampleValue(waiting, 'router_environments', { state: 'waking' }), 1);
      control.release();
      assert.deepEqual(
        (await Promise.all(answers)).map((answer) => answer.status),
        [200, 200, 200],
      );

      const text = (await scrape(router.internalUrl)).text;
      assert.equal(sampleValue(text, 'router_wakes_total', { outcome: 'ready' }), 1, 'one wake however many waited');
      assert.equal(sampleValue(text, 'router_cold_starts_total'), 1);
      assert.equal(sampleValue(text, 'router_wake_duration_seconds_count'), 1);
      assert.ok((sampleValue(text, 'router_wake_duration_seconds_sum') as number) > 0);
      assert.equal(sampleValue(text, 'router_proxy_duration_seconds_count', { target: 'daemon' }), 3);
      assert.equal(sampleValue(text, 'router_proxy_failures_total', { target: 'daemon' }), 0);
      assert.equal(sampleValue(text, 'router_waiters'), 0);
      assert.equal(sampleValue(text, 'router_environments', { state: 'running' }), 1);
      assert.equal(sampleValue(text, 'router_environments', { state: 'waking' }), 0);
      // Both listeners count into the one registry; the database's queries are there too.
      assert.ok((sampleValue(text, 'http_requests_total', { method: 'GET', route: '/*', status_class: '2xx' }) as number) >= 3);
      assert.ok((sampleValue(text, 'http_requests_total', { method: 'POST', route: '/admin/users', status_class: '2xx' }) as number) >= 1);
      assert.ok((sampleValue(text, 'db_query_duration_seconds_count', { outcome: 'ok' }) as number) > 0);
      assert.doesNotMatch(text, new RegExp(sub), 'no user id in any label');
      assertBoundedLabels(text);
    });

    test('the daemons’ metrics, summed, on the internal listener; one daemon’s bearer opens no other', async () => {
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const token = await idp.token({ sub });
      assert.equal((await router.call('GET', '/me', token)).status, 200);
      const running = router.router.deps.provider.running().length;
      assert.ok(running >= 1);
      const answer = await scrape(router.internalUrl, '/metrics/daemons');
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = answer.text;
      assert.equal(sampleValue(text, 'daemon_scrapes', { outcome: 'ok' }), running);
      assert.equal(sampleValue(text, 'daemon_scrapes', { outcome: 'failed' }), 0);
      for (const name of [
        'daemon_intents',
        'daemon_gates_pending',
        'daemon_sse_subscribers',
        'daemon_sse_dropped_events_total',
        'daemon_journal_appends_total',
      ])
        assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
      assert.equal(sampleValue(text, 'daemon_intents', { state: 'executing' }), 0);
      // Every daemon's GET /me (this test's and the one before's), one series for all of them.
      assert.ok((sampleValue(text, 'http_requests_total', { method: 'GET', route: '/me', status_class: '2xx' }) as number) >= 2);
      assert.ok((sampleValue(text, 'process_resident_memory_bytes') as number) > 0);
      assert.doesNotMatch(text, /^process_start_time_seconds/m, 'a start time summed over processes means nothing: left out');
      assert.doesNotMatch(text, /router_/);
      assertBoundedLabels(text);
    });

    test('/metrics is never public: 401 in the envelope without the metrics bearer, not served on the public listener', async () => {
      for (const path of ['/metrics', '/metrics/daemons'])
        for (const bearer of [null, 'wrong', adminToken, wakeToken]) {
          const answer = await scrape(router.internalUrl, path, bearer);
          assert.equal(answer.status, 401, `${path} with ${bearer}`);
          assert.equal(answer.json.error.code, 'unauthorized');
        }
      // The public listener has no /metrics of its own: the path is the signed-in user's daemon's, which wants its bearer.
      assert.equal((await scrape(router.publicUrl, '/metrics')).status, 401);
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const asUser = await router.call('GET', '/metrics', await idp.token({ sub }));
      assert.equal(asUser.status, 401, 'the daemon refuses the router’s proxied bearer on its /metrics');
      assert.doesNotMatch(asUser.text, /router_wakes_total|daemon_intents/);
    });

    test('scheduler wakes handed to the daemon are counted by how they were answered', async () => {
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const body = wakeBody(sub);
      const wake = (payload: unknown, bearer = wakeToken) =>
        httpCall(router.internalUrl, 'POST', '/internal/wake', { bearer, headers: { 'idempotency-key': `${body.alarm_id}:x` }, body: payload });
      assert.equal((await wake(body)).status, 202);
      assert.equal((await wake(body)).status, 200);
      assert.equal((await wake({ ...body, check: true })).status, 200);
      assert.equal((await wake({ ...body, user_id: randomUUID() })).status, 404);
      assert.equal((await wake(body, 'wrong')).status, 401);
      const text = (await scrape(router.internalUrl)).text;
      for (const [outcome, count] of [
        ['accepted', 1],
        ['duplicate', 1],
        ['checked', 1],
        ['refused', 1],
        ['failed', 0],
      ] as const)
        assert.equal(sampleValue(text, 'router_wake_deliveries_total', { outcome }), count, outcome);
    });

    test('a wake the provider cannot start is counted as failed', async () => {
      const sub = randomUUID();
      await router.admin('POST', '/admin/users', { idp_user_id: sub });
      const before = sampleValue((await scrape(router.internalUrl)).text, 'router_wakes_total', { outcome: 'failed' }) as number;
      control.fail(true);
      try {
        assert.equal((await router.call('GET', '/me', await idp.token({ sub }))).status, 503);
      } finally {
        control.fail(false);
      }
      const text = (await scrape(router.internalUrl)).text;
      assert.equal(sampleValue(text, 'router_wakes_total', { outcome: 'failed' }), before + 1);
    });
  });
}
