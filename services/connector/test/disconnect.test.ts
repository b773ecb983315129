import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { connectorId, startWorkspace, type Workspace } from './workspace.ts';

for (const engine of testEngines()) {
  describe(`POST /v1/disconnect on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine);
    });
    after(() => w.close());

    const disconnect = (token: string, connector = connectorId) => w.s.call('POST', '/v1/disconnect', { token, body: { connector } });
    const revocations = () => w.oauth.calls.filter((c) => c.endpoint === 'revocation').length;

    test('revokes the grant at the provider, removes the row; the tools then answer not_connected', async () => {
      const user = await w.oauthUser();
      const credential = await w.stored(user.owner);
      assert.ok(credential && (await w.oauth.refreshTokenLive(credential.refreshToken)));
      const answer = await disconnect(user.token);
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body.data, { connector: connectorId, disconnected: true, revoked: true });
      assert.equal(await w.oauth.refreshTokenLive(credential.refreshToken), false);
      assert.equal(await w.oauth.scopesOf(credential.accessToken), undefined);
      assert.equal(await w.stored(user.owner), undefined);
      const after = await w.invoke(user.token, 'calendar_list', {});
      assert.equal(after.status, 409);
      assert.equal((after.body.error as { reason?: string }).reason, 'not_connected');
    });

    test('not connected: 404 saying so; an unknown connector: 404', async () => {
      const agent = await w.s.agent();
      const answer = await disconnect(agent.token);
      assert.equal(answer.status, 404);
      assert.match(answer.body.error?.message ?? '', /google-workspace is not connected for this user; there is nothing to disconnect/);
      assert.equal((await disconnect(agent.token, 'dropbox')).status, 404);
    });

    test('the provider failing (503): 503 retryable, the row kept; the retry revokes and removes', async () => {
      const user = await w.oauthUser();
      w.oauth.failNext('revocation', 503);
      const failed = await disconnect(user.token);
      assert.equal(failed.status, 503);
      assert.deepEqual([failed.body.error?.code, failed.body.error?.retryable], ['unavailable', true]);
      assert.ok(await w.stored(user.owner));
      assert.equal((await disconnect(user.token)).status, 200);
      assert.equal(await w.stored(user.owner), undefined);
    });

    test('a token already dead (Google’s 400 invalid_token, or RFC 7009’s 200 for an unknown one): removed', async () => {
      const google = await w.oauthUser();
      w.oauth.failNext('revocation', 400, { error: 'invalid_token' });
      assert.equal((await disconnect(google.token)).status, 200);
      assert.equal(await w.stored(google.owner), undefined);
      const revokedElsewhere = await w.oauthUser();
      assert.equal(await w.oauth.revoke((await w.stored(revokedElsewhere.owner))?.refreshToken as string), 200);
      assert.equal((await disconnect(revokedElsewhere.token)).status, 200);
      assert.equal(await w.stored(revokedElsewhere.owner), undefined);
    });

    test('the provider refusing the client (invalid_client): 503 not retryable naming the settings, the row kept', async () => {
      const user = await w.oauthUser();
      w.oauth.failNext('revocation', 401, { error: 'invalid_client' });
      const answer = await disconnect(user.token);
      assert.equal(answer.status, 503);
      assert.equal(answer.body.error?.retryable, false);
      assert.match(answer.body.error?.message ?? '', /invalid_client.*CONNECTOR_GOOGLE_CLIENT_ID/);
      assert.ok(await w.stored(user.owner));
    });

    test('another owner cannot disconnect this one’s connection: 404, the row and the grant untouched', async () => {
      const owner = await w.oauthUser();
      const stranger = await w.s.agent();
      const before = revocations();
      assert.equal((await disconnect(stranger.token)).status, 404);
      assert.equal(revocations(), before);
      const credential = await w.stored(owner.owner);
      assert.ok(credential && (await w.oauth.refreshTokenLive(credential.refreshToken)));
    });
  });

  describe(`auth on the connect routes on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine);
    });
    after(() => w.close());

    const routes = [
      ['POST', '/v1/connect'],
      ['POST', '/v1/disconnect'],
    ] as const;

    test('no or a forged transport bearer: 401 before anything else', async () => {
      const agent = await w.s.agent();
      for (const [method, url] of routes) {
        for (const bearer of [null, 'forged-transport-token']) {
          const answer = await w.s.call(method, url, { token: agent.token, bearer, body: { connector: connectorId } });
          assert.equal(answer.status, 401, `${url} ${bearer}`);
          assert.match(answer.body.error?.message ?? '', /transport bearer/);
        }
      }
    });

    test('no, a forged or an expired principal token: 401 naming the header, before the body is read', async () => {
      const agent = await w.s.agent();
      for (const [method, url] of routes) {
        const none = await w.s.call(method, url, { body: { connector: connectorId } });
        assert.equal(none.status, 401);
        assert.match(none.body.error?.message ?? '', /missing principal token \(X-Connector-Agent header\)/);
        // An invalid body does not matter: the principal is refused first.
        const forged = await w.s.call(method, url, { token: `${agent.token.slice(0, -4)}AAAA`, body: { nonsense: true } });
        assert.equal(forged.status, 401);
        assert.match(forged.body.error?.message ?? '', /invalid principal token/);
      }
      w.s.clock.advance(86_400_000 + 1_000);
      for (const [method, url] of routes) {
        const expired = await w.s.call(method, url, { token: agent.token, body: { connector: connectorId } });
        assert.equal(expired.status, 401);
        assert.match(expired.body.error?.message ?? '', /expired/);
      }
    });

    test('the callback needs no bearer (a browser has none), and a wrong one changes nothing; the catalogue still needs no principal', async () => {
      const agent = await w.s.agent();
      const { url } = await w.begin(agent.token);
      const back = await w.oauth.authorize(url.toString());
      const page = await w.callback(back, w.s.call, { bearer: 'not-the-bearer' });
      assert.equal(page.status, 200, page.text);
      assert.equal((await w.s.call('GET', '/v1/connectors')).status, 200);
      assert.equal((await w.s.call('GET', '/v1/connections')).status, 401);
    });
  });

  describe(`client_secret_basic on ${engine.name}`, () => {
    test('a provider that authenticates clients with HTTP Basic: connect, refresh and disconnect all work', async () => {
      const w = await startWorkspace(engine, { clientAuth: 'client_secret_basic' });
      try {
        const user = await w.oauthUser();
        const credential = await w.stored(user.owner);
        assert.ok(credential);
        w.s.clock.set(new Date(credential.expiresAt.getTime() - 1_000));
        assert.equal((await w.invoke(user.token, 'calendar_list', {})).status, 200);
        assert.equal(w.oauth.grants('refresh_token'), 1);
        assert.equal((await w.s.call('POST', '/v1/disconnect', { token: user.token, body: { connector: connectorId } })).status, 200);
        assert.equal(await w.oauth.refreshTokenLive(credential.refreshToken), false);
        assert.ok(w.oauth.calls.every((call) => call.status === 200));
      } finally {
        await w.close();
      }
    });
  });
}
