import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { connectorLimits } from '../src/limits.ts';
import { connectorId, startWorkspace, type Workspace } from './workspace.ts';

const hour = 3_600_000;

for (const engine of testEngines()) {
  describe(`token refresh on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine);
    });
    after(() => w.close());

    /** A user connected through the real flow, with the clock moved to `msBeforeExpiry` before the token expires. */
    async function expiringUser(msBeforeExpiry: number) {
      const user = await w.oauthUser();
      const credential = await w.stored(user.owner);
      assert.ok(credential);
      w.s.clock.set(new Date(credential.expiresAt.getTime() - msBeforeExpiry));
      return { ...user, credential };
    }
    const statusOf = async (token: string) => (await w.s.call('GET', '/v1/connections', { token })).body.data.connections[0]?.status;

    test('refreshed before a tool runs once within the margin (not 1 ms before it); the refresh token is kept', async () => {
      const margin = w.settings.refreshMarginMs;
      const user = await expiringUser(margin + 1);
      const refreshes = w.oauth.grants('refresh_token');
      assert.equal((await w.invoke(user.token, 'calendar_list', {})).status, 200);
      assert.equal(w.oauth.grants('refresh_token'), refreshes);
      w.s.clock.advance(1);
      const answer = await w.invoke(user.token, 'calendar_list', {});
      assert.equal(answer.status, 200, answer.text);
      assert.equal(w.oauth.grants('refresh_token'), refreshes + 1);
      const now = await w.stored(user.owner);
      assert.notEqual(now?.accessToken, user.credential.accessToken);
      assert.equal(now?.refreshToken, user.credential.refreshToken);
      assert.equal(now?.expiresAt.getTime(), w.s.clock.now().getTime() + hour);
      assert.equal(w.google.requests.at(-1)?.authorization, `Bearer ${now?.accessToken}`);
    });

    test('concurrent calls on two instances: one token endpoint call, every call served with the new token', async () => {
      const user = await expiringUser(1_000);
      const sibling = await w.s.sibling();
      const refreshes = w.oauth.calls.filter((c) => c.grantType === 'refresh_token').length;
      const held = w.oauth.holdNext('token');
      const sleeps = w.s.clock.sleeps.received.length;
      // Two calls on this instance share one flight; it claims the row and reaches the provider, where it is held.
      const first = [w.invoke(user.token, 'calendar_list', {}), w.invoke(user.token, 'calendar_list', {})];
      await held.arrived;
      // The sibling cannot claim the row: it waits on the clock, reading the row again each poll.
      const second = w.invoke(user.token, 'calendar_list', {}, { call: sibling.call });
      await w.s.clock.sleeps.waitFor(sleeps + 1);
      held.release();
      for (const answer of await Promise.all(first)) assert.equal(answer.status, 200, answer.text);
      w.s.clock.advance(connectorLimits.refreshPollMs);
      const late = await second;
      assert.equal(late.status, 200, late.text);
      assert.equal(w.oauth.calls.filter((c) => c.grantType === 'refresh_token').length, refreshes + 1);
      const now = await w.stored(user.owner);
      const used = w.google.requests.slice(-3).map((r) => r.authorization);
      assert.deepEqual(used, [`Bearer ${now?.accessToken}`, `Bearer ${now?.accessToken}`, `Bearer ${now?.accessToken}`]);
    });

    test('a claim left by a crashed instance lapses after the lease; then this instance refreshes', async () => {
      const user = await expiringUser(1_000);
      const found = await w.s.repository.find(user.owner, connectorId);
      assert.ok(found);
      const lease = 5_000 + connectorLimits.refreshLeaseSlackMs;
      assert.ok(await w.s.repository.claimRefresh(found.connection.id, found.iv, lease));
      const refreshes = w.oauth.grants('refresh_token');
      const sleeps = w.s.clock.sleeps.received.length;
      const pending = w.invoke(user.token, 'calendar_list', {});
      await w.s.clock.sleeps.waitFor(sleeps + 1);
      assert.equal(w.oauth.grants('refresh_token'), refreshes);
      w.s.clock.advance(lease);
      const answer = await pending;
      assert.equal(answer.status, 200, answer.text);
      assert.equal(w.oauth.grants('refresh_token'), refreshes + 1);
    });

    test('invalid_grant while a sibling stored a fresh credential (a reconnect): the fresh one is used, nothing is marked', async () => {
      const user = await expiringUser(1_000);
      const sibling = await w.s.sibling();
      const held = w.oauth.holdNext('token');
      const pending = w.invoke(user.token, 'calendar_list', {});
      await held.arrived;
      // Meanwhile the user reconnects through the sibling (its code exchange is not held), and the old grant is revoked.
      const { url } = await w.begin(user.token, sibling.call);
      assert.equal((await w.callback(await w.oauth.authorize(url.toString()), sibling.call)).status, 200);
      assert.equal(await w.oauth.revoke(user.credential.refreshToken), 200);
      const fresh = await w.stored(user.owner);
      held.release();
      const answer = await pending;
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(w.oauth.calls.filter((c) => c.grantType === 'refresh_token').at(-1), {
        endpoint: 'token',
        grantType: 'refresh_token',
        status: 400,
        error: 'invalid_grant',
      });
      assert.equal(w.google.requests.at(-1)?.authorization, `Bearer ${fresh?.accessToken}`);
      assert.equal(await statusOf(user.token), 'connected');
      assert.deepEqual(await w.stored(user.owner), fresh);
    });

    test('invalid_grant with no newer row: 409 needs_reconnect, marked; the next call is refused without a provider call', async () => {
      const user = await expiringUser(1_000);
      assert.equal(await w.oauth.revoke(user.credential.refreshToken), 200);
      const answer = await w.invoke(user.token, 'calendar_list', {});
      assert.equal(answer.status, 409);
      assert.equal((answer.body.error as { reason?: string }).reason, 'needs_reconnect');
      assert.equal(await statusOf(user.token), 'needs_reconnect');
      const calls = w.oauth.calls.length;
      assert.equal((await w.invoke(user.token, 'calendar_list', {})).status, 409);
      assert.equal(w.oauth.calls.length, calls);
    });

    // The claim is written in database time (microseconds on PostgreSQL); giving it back must not depend on reading
    // that time back exactly, or the next call waits out the whole lease.
    for (const [status, error, reason] of [
      [503, 'temporarily_unavailable', 'provider_unavailable'],
      [401, 'invalid_client', 'oauth_client_refused'],
    ] as const) {
      test(`a failed refresh (${status} ${error}): 503, the connection kept, and its claim given back: the next call refreshes at once`, async () => {
        const user = await expiringUser(1_000);
        w.oauth.failNext('token', status, { error });
        const failed = await w.invoke(user.token, 'calendar_list', {});
        assert.equal(failed.status, 503, failed.text);
        assert.deepEqual([failed.body.error?.code, failed.body.error?.retryable], ['unavailable', status === 503]);
        assert.equal((failed.body.error as { reason?: string }).reason, reason);
        assert.equal(await statusOf(user.token), 'connected');
        assert.deepEqual(await w.stored(user.owner), user.credential);
        const sleeps = w.s.clock.sleeps.received.length;
        const next = w.invoke(user.token, 'calendar_list', {});
        const first = await Promise.race([next.then(() => 'answered'), w.s.clock.sleeps.waitFor(sleeps + 1).then(() => 'waiting on the claim')]);
        assert.equal(first, 'answered');
        const answer = await next;
        assert.equal(answer.status, 200, answer.text);
        assert.notEqual((await w.stored(user.owner))?.accessToken, user.credential.accessToken);
      });
    }

    test('the provider refuses a token not yet expired (401): refreshed once and the tool tried once more', async () => {
      const user = await w.oauthUser();
      const before = await w.stored(user.owner);
      const refreshes = w.oauth.grants('refresh_token');
      w.google.failNext({ path: /\/events$/ }, { status: 401, reason: 'authError' });
      const answer = await w.invoke(user.token, 'calendar_list', {});
      assert.equal(answer.status, 200, answer.text);
      assert.equal(w.oauth.grants('refresh_token'), refreshes + 1);
      assert.notEqual((await w.stored(user.owner))?.accessToken, before?.accessToken);
      assert.equal(await statusOf(user.token), 'connected');
    });
  });
}
