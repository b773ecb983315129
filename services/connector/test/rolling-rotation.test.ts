import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import type { Credential } from '../src/connections/credential.ts';
import { keyringOf } from './harness.ts';
import { startWorkspace, type Workspace } from './workspace.ts';

/**
 * A vault key rotation while the service runs as several instances on one database, against a provider that rotates
 * refresh tokens (a refresh token is single use: a credential that loses the new one must reconnect).
 */
for (const engine of testEngines()) {
  describe(`vault key rotation across instances on ${engine.name}`, () => {
    const keys = new Map<string, Buffer>();
    /** CONNECTOR_VAULT_KEYS at one step of the rotation: `ids` in the order they are listed, `current` marked `*`. */
    const setting = (ids: readonly string[], current: string) => keyringOf(ids, current, keys);
    let w: Workspace;
    before(async () => {
      // The tests' main instance has added k2 but not made it current (the first phase below).
      w = await startWorkspace(engine, { rotateRefreshTokens: true, keyring: setting(['k1', 'k2'], 'k1') });
    });
    after(() => w.close());

    /** Users connected through the whole flow, each on its own connection row. */
    async function freshUsers(count: number) {
      await w.s.database.db.deleteFrom('connections').execute();
      const users = [];
      for (let i = 0; i < count; i++) users.push(await w.oauthUser());
      return users;
    }

    /** Moves the clock to just before the user's access token expires, so the next call refreshes it. */
    async function expireSoon(owner: string) {
      const credential = await w.stored(owner);
      assert.ok(credential);
      w.s.clock.set(new Date(credential.expiresAt.getTime() - 1_000));
      return credential;
    }

    /**
     * A call through the main instance whose refresh is held at the provider while an instance on step 2's setting
     * re-seals the row (new key, new IV, same credential); `beforeRefresh` runs first (to revoke the grant, say).
     */
    async function refreshDuringReseal(beforeRefresh: (credential: Credential) => Promise<void> = async () => {}) {
      const [user] = await freshUsers(1);
      assert.ok(user);
      const before = await expireSoon(user.owner);
      await beforeRefresh(before);
      const rotated = await w.s.instanceWith(setting(['k1', 'k2'], 'k2'));
      const held = w.oauth.holdNext('token');
      const pending = w.invoke(user.token, 'calendar_list', {});
      await held.arrived;
      assert.equal((await rotated.resealer.runOnce()).moved, 1);
      held.release();
      const answer = await pending;
      await rotated.stop();
      return { user, before, answer };
    }

    test('a re-seal that lands while a refresh is at the provider: the rotated refresh token is kept; the next refresh succeeds', async () => {
      const refreshes = w.oauth.grants('refresh_token');
      const { user, before, answer } = await refreshDuringReseal();
      assert.equal(answer.status, 200, answer.text);
      const after = await expireSoon(user.owner);
      assert.notEqual(after.refreshToken, before.refreshToken);
      assert.equal(await w.oauth.refreshTokenLive(after.refreshToken), true);
      const next = await w.invoke(user.token, 'calendar_list', {});
      assert.equal(next.status, 200, next.text);
      assert.equal(w.oauth.grants('refresh_token'), refreshes + 2);
    });

    test('a refresh refused (invalid_grant) while a re-seal moved the row: 409 needs_reconnect, and the row says so', async () => {
      const { user, answer } = await refreshDuringReseal(async (credential) => {
        assert.equal(await w.oauth.revoke(credential.refreshToken), 200);
      });
      assert.equal(answer.status, 409, answer.text);
      assert.equal((answer.body.error as { reason?: string }).reason, 'needs_reconnect');
      const listed = await w.s.call('GET', '/v1/connections', { token: user.token });
      assert.equal(listed.body.data.connections[0]?.status, 'needs_reconnect');
    });

    test('a rolling rotation in two phases: both instances answer every call at every step; rows move one way only', async () => {
      const users = await freshUsers(3);
      let a = await w.s.instanceWith(setting(['k1'], 'k1'));
      let b = await w.s.instanceWith(setting(['k1'], 'k1'));
      async function restart(instance: typeof a, ids: readonly string[], current: string) {
        await instance.stop();
        return w.s.instanceWith(setting(ids, current));
      }
      async function everyCallAnswers(step: string) {
        for (const [name, instance] of [
          ['A', a],
          ['B', b],
        ] as const) {
          for (const user of users) {
            const answer = await w.invoke(user.token, 'calendar_list', {}, { call: instance.call });
            assert.equal(answer.status, 200, `${step}, through ${name}: ${answer.text}`);
          }
        }
      }
      const nothingMoved = { moved: 0, raced: 0, failed: 0, batches: 1 };
      await everyCallAnswers('before the rotation');

      // Phase 1: k2 is added after the current key, one instance at a time. It opens rows and seals none yet.
      a = await restart(a, ['k1', 'k2'], 'k1');
      assert.deepEqual(await a.resealer.runOnce(), nothingMoved);
      await everyCallAnswers('phase 1, A restarted');
      b = await restart(b, ['k1', 'k2'], 'k1');
      assert.deepEqual(await b.resealer.runOnce(), nothingMoved);
      await everyCallAnswers('phase 1 done');
      assert.deepEqual(await w.s.repository.countByKey(), { k1: 3 });

      // Phase 2: k2 becomes current, one instance at a time. A moves every row onto k2; B, for which k2 is still the
      // next key, opens them and moves none back.
      a = await restart(a, ['k1', 'k2'], 'k2');
      assert.deepEqual(await a.resealer.runOnce(), { ...nothingMoved, moved: 3 });
      assert.deepEqual(await b.resealer.runOnce(), nothingMoved);
      assert.deepEqual(await w.s.repository.countByKey(), { k2: 3 });
      await everyCallAnswers('phase 2, A restarted');
      // B still seals with k1: a refresh through it writes a k1 row, which A opens and moves on its next pass.
      const [first] = users;
      assert.ok(first);
      await expireSoon(first.owner);
      const refreshed = await w.invoke(first.token, 'calendar_list', {}, { call: b.call });
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.deepEqual(await w.s.repository.countByKey(), { k1: 1, k2: 2 });
      await everyCallAnswers('phase 2, a row refreshed through B');
      assert.equal((await a.resealer.runOnce()).moved, 1);
      b = await restart(b, ['k1', 'k2'], 'k2');
      assert.deepEqual(await b.resealer.runOnce(), nothingMoved);
      await everyCallAnswers('phase 2 done');
      assert.deepEqual(await w.s.repository.countByKey(), { k2: 3 });

      // Phase 3: no row names k1 any more, so it is removed, one instance at a time.
      a = await restart(a, ['k2'], 'k2');
      await everyCallAnswers('k1 removed from A');
      b = await restart(b, ['k2'], 'k2');
      await everyCallAnswers('k1 removed everywhere');
      await a.stop();
      await b.stop();
    });
  });
}
