import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { httpCall } from '@platform/testkit/http-call';
import { adminToken, countingProvider, type IdentityProvider, invite, startIdentityProvider, startRouter } from './harness.ts';

for (const engine of testEngines()) {
  describe(`accounts, invites and states on ${engine.name}`, () => {
    let idp: IdentityProvider;
    let router: Awaited<ReturnType<typeof startRouter>>;
    let counts: ReturnType<typeof countingProvider>['counts'];

    before(async () => {
      idp = await startIdentityProvider();
      router = await startRouter(engine, idp, {
        provider: (base) => {
          const counting = countingProvider(base);
          counts = counting.counts;
          return counting.provider;
        },
      });
    });
    after(async () => {
      await router?.dispose();
      await idp?.close();
    });

    test('no row and no invite is 403 with the way in; after redeeming, the first requests provision exactly once and reach the daemon', async () => {
      const sub = randomUUID();
      const token = await idp.token({ sub });
      const refused = await router.call('GET', '/me', token);
      assert.deepEqual([refused.status, refused.json.error.code, refused.json.error.reason], [403, 'forbidden', 'no_invite']);
      assert.match(refused.json.error.message, /POST \/v\/invites\/redeem/);
      await invite(router, token);
      const before = { ...counts };
      const answers = await Promise.all(Array.from({ length: 40 }, () => router.call('GET', '/me', token)));
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      assert.equal(answers[0]?.json.data.user_id, sub, 'the daemon serves this user');
      assert.equal(counts.ensure - before.ensure, 1, 'provisioned once');
      assert.equal(counts.start - before.start, 1, 'started once');
      assert.equal(answers.filter((answer) => answer.headers.get('x-platform-cold-start-ms') !== null).length, 40, 'every waiting request says it waited');
      const row = await router.admin('GET', `/admin/users/${sub}`);
      assert.deepEqual([row.json.data.state, row.json.data.environment.status, row.json.data.environment.provider], ['active', 'running', 'process']);
      assert.ok(existsSync(join(row.json.data.environment.volume, 'data', 'journal')), 'the daemon keeps its files in the volume');
      const warm = await router.call('GET', '/me', token);
      assert.equal(warm.headers.get('x-platform-cold-start-ms'), null, 'no cold start once awake');
    });

    test('suspend (451), restore, delete (410 and the volume gone); the transitions that make no sense are 409', async () => {
      const sub = randomUUID();
      const token = await idp.token({ sub });
      const created = await router.admin('POST', '/admin/users', { idp_user_id: sub, email: 'ada@example.com', handle: 'ada', region: 'local' });
      assert.equal(created.status, 201);
      assert.deepEqual([created.json.data.state, created.json.data.email, created.json.data.handle], ['active', 'ada@example.com', 'ada']);
      assert.equal((await router.admin('POST', '/admin/users', { idp_user_id: sub, email: 'ada@lovelace.org' })).status, 200, 'touching an existing user');
      assert.equal((await router.call('GET', '/me', token)).status, 200);
      const suspended = await router.admin('POST', `/admin/users/${sub}/suspend`);
      assert.deepEqual([suspended.status, suspended.json.data.state, suspended.json.data.environment.status], [200, 'suspended', 'stopped']);
      const blocked = await router.call('GET', '/me', token);
      assert.deepEqual([blocked.status, blocked.json.error.code], [451, 'account_suspended']);
      assert.equal((await router.admin('POST', `/admin/users/${sub}/restore`)).json.data.state, 'active');
      assert.equal((await router.call('GET', '/me', token)).status, 200, 'woken again after the restore');
      const deleted = await router.admin('DELETE', `/admin/users/${sub}`);
      assert.equal(deleted.json.data.state, 'deleted');
      assert.ok(!existsSync(created.json.data.environment.volume), 'the volume is destroyed');
      const gone = await router.call('GET', '/me', token);
      assert.deepEqual([gone.status, gone.json.error.code], [410, 'account_deleted']);
      for (const [method, path, body] of [
        ['POST', `/admin/users/${sub}/suspend`, undefined],
        ['POST', `/admin/users/${sub}/restore`, undefined],
        ['POST', '/admin/users', { idp_user_id: sub }],
      ] as const) {
        const refused = await router.admin(method, path, body);
        assert.deepEqual([refused.status, refused.json.error.code, refused.json.error.state], [409, 'conflict', 'deleted'], path);
      }
    });

    test('a user provisioning elsewhere gets 503 with Retry-After', async () => {
      const sub = randomUUID();
      await router.router.deps.users.claimProvisioning(sub, {}, 'process', 'local');
      const answer = await router.call('GET', '/me', await idp.token({ sub }));
      assert.deepEqual([answer.status, answer.json.error.code, answer.headers.get('retry-after')], [503, 'unavailable', '5']);
    });

    test('invites: one use each unless more, expiry, unknown codes, and a code typed loosely', async () => {
      const single = (await router.admin('POST', '/admin/invites', { note: 'for bob' })).json.data;
      assert.match(single.code, /^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/);
      const first = await idp.token();
      const loose = single.code.toLowerCase().replaceAll('-', ' ');
      assert.deepEqual((await router.call('POST', '/v/invites/redeem', first, { body: { code: loose } })).json.data.already, false);
      assert.equal((await router.call('POST', '/v/invites/redeem', first, { body: { code: single.code } })).json.data.already, true, 'again: no harm');
      const second = await router.call('POST', '/v/invites/redeem', await idp.token(), { body: { code: single.code } });
      assert.deepEqual([second.status, second.json.error.reason], [409, 'used_up']);
      const unknown = await router.call('POST', '/v/invites/redeem', await idp.token(), { body: { code: 'ZZZZ-ZZZZ-ZZZZ-ZZZZ' } });
      assert.deepEqual([unknown.status, unknown.json.error.reason], [400, 'unknown']);
      const shared = (await router.admin('POST', '/admin/invites', { uses: 3, expires_in_seconds: 60 })).json.data;
      const redeemers = await Promise.all(
        Array.from({ length: 5 }, async () => router.call('POST', '/v/invites/redeem', await idp.token(), { body: { code: shared.code } })),
      );
      assert.deepEqual(redeemers.map((answer) => answer.status).sort(), [200, 200, 200, 409, 409], 'never more redemptions than uses');
      const listed = (await router.admin('GET', '/admin/invites')).json.data.invites;
      assert.equal(listed.find((entry: { code: string }) => entry.code === shared.code).used, 3);
      const bad = await router.admin('POST', '/admin/invites', { uses: 0 });
      assert.equal(bad.status, 400);
      assert.equal((await router.call('POST', '/v/invites/redeem', null, { body: { code: shared.code } })).status, 401);
    });

    test('admin routes need their bearer (constant time), validate ids, and name unknown users', async () => {
      for (const bearer of [null, 'wrong', `${adminToken}x`]) {
        const answer = await httpCall(router.internalUrl, 'GET', `/admin/users/${randomUUID()}`, { bearer });
        assert.equal(answer.status, 401);
      }
      assert.equal((await router.admin('GET', `/admin/users/${randomUUID()}`)).status, 404);
      const invalid = await router.admin('POST', '/admin/users', { idp_user_id: 'not-a-uuid' });
      assert.deepEqual([invalid.status, invalid.json.error.code], [400, 'invalid_request']);
      assert.match(invalid.json.error.message, /idp_user_id must match format "uuid"/);
      assert.equal((await router.admin('POST', '/admin/users', { idp_user_id: randomUUID(), handle: 'Bad Handle' })).status, 400);
      assert.equal((await router.admin('GET', '/admin/users/not-a-uuid')).status, 400);
      const health = await httpCall(router.internalUrl, 'GET', '/healthz', {});
      assert.equal(health.json.data.db, true);
      assert.ok(health.json.data.cold_starts.count >= 1);
    });
  });
}

describe('the admin and wake routes exist only with their tokens', () => {
  test('without ROUTER_ADMIN_TOKEN and ROUTER_WAKE_TOKEN they answer 404', async () => {
    const [pglite] = testEngines();
    const bare = await startRouter(pglite!, undefined, { env: { ROUTER_ADMIN_TOKEN: '', ROUTER_WAKE_TOKEN: '' } });
    try {
      assert.equal((await httpCall(bare.internalUrl, 'POST', '/admin/users', { bearer: '', body: {} })).status, 404);
      assert.equal((await httpCall(bare.internalUrl, 'POST', '/internal/wake', { bearer: '', body: {} })).status, 404);
      assert.equal((await httpCall(bare.internalUrl, 'GET', '/healthz', {})).status, 200);
    } finally {
      await bare.dispose();
    }
  });
});
