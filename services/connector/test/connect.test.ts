import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { connectorLimits } from '../src/limits.ts';
import { startConnector } from './harness.ts';
import { calendarEvents, clientId, connectorId, mailModify, redirectUri, startWorkspace, type Workspace } from './workspace.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

for (const engine of testEngines()) {
  describe(`POST /v1/connect and the callback on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine);
    });
    after(() => w.close());

    const connectionsOf = async (token: string) =>
      (await w.s.call('GET', '/v1/connections', { token })).body.data.connections as { scopes: string[]; status: string }[];

    test('the whole flow with PKCE: the URL asks for offline access and exactly the scopes; the callback stores the credential; a tool works', async () => {
      const agent = await w.s.agent();
      const { begun, url, params } = await w.begin(agent.token);
      assert.deepEqual(Object.keys(begun.body.data).sort(), ['authorization_url', 'connector', 'expires_at']);
      assert.equal(begun.body.data.connector, connectorId);
      assert.equal(begun.body.data.expires_at, '2026-03-01T12:10:00.000Z');
      assert.equal(`${url.origin}${url.pathname}`, w.oauth.authorizeUrl);
      assert.equal(params.response_type, 'code');
      assert.equal(params.client_id, clientId);
      assert.equal(params.redirect_uri, redirectUri);
      assert.equal(params.scope, `${mailModify} ${calendarEvents}`);
      assert.equal(params.access_type, 'offline');
      assert.equal(params.prompt, 'consent');
      assert.equal(params.code_challenge_method, 'S256');
      assert.match(params.code_challenge ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.match(params.state ?? '', /^[A-Za-z0-9_-]{43}$/);
      // Only the state's hash is stored, and the verifier is sealed: no column holds the state or a PKCE value in clear.
      const rows = await w.s.database.db.selectFrom('connect_states').selectAll().execute();
      const mine = rows.find((row) => Buffer.from(row.state_hash).equals(sha256(params.state as string)));
      assert.ok(mine);
      assert.equal(mine.owner, agent.owner);
      assert.ok(!JSON.stringify(rows).includes(params.state as string));

      const back = await w.oauth.authorize(url.toString());
      assert.equal(back.state, params.state);
      const page = await w.callback(back);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(
        String(page.headers['content-security-policy']),
        /^default-src 'none'; style-src 'sha256-[^']+'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
      );
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.match(page.text, /Google Workspace is connected\. You can close this window\./);
      assert.ok(!page.text.includes(back.code as string) && !page.text.includes(back.state as string));
      assert.doesNotMatch(page.text, /<script|src=|href=/);
      assert.equal(w.oauth.grants('authorization_code'), 1);

      const [connection] = await connectionsOf(agent.token);
      assert.deepEqual(connection?.scopes, [mailModify, calendarEvents]);
      assert.equal(connection?.status, 'connected');
      const stored = await w.stored(agent.owner);
      assert.equal(stored?.expiresAt.toISOString(), '2026-03-01T13:00:00.000Z');
      // The stand-in accepts the token the provider issued: the tool call went through with it.
      const listed = await w.invoke(agent.token, 'calendar_list', {});
      assert.equal(listed.status, 200, listed.text);
      assert.equal(w.google.requests.at(-1)?.authorization, `Bearer ${stored?.accessToken}`);
    });

    test('a PKCE challenge that is not the stored verifier’s: the provider refuses the code, nothing is stored', async () => {
      const agent = await w.s.agent();
      const { url } = await w.begin(agent.token);
      url.searchParams.set('code_challenge', createHash('sha256').update('a'.repeat(43)).digest('base64url'));
      const page = await w.callback(await w.oauth.authorize(url.toString()));
      assert.equal(page.status, 400);
      assert.match(page.text, /Connection failed: code refused.*invalid_grant/);
      assert.deepEqual(await connectionsOf(agent.token), []);
    });

    test('the user grants fewer scopes than asked: the granted ones are stored, and a tool outside them is refused', async () => {
      const agent = await w.s.agent();
      w.oauth.decide({ account: 'user-2', grant: [calendarEvents] });
      try {
        const { url } = await w.begin(agent.token);
        assert.equal((await w.callback(await w.oauth.authorize(url.toString()))).status, 200);
      } finally {
        w.oauth.decide({ account: 'user-1' });
      }
      assert.deepEqual((await connectionsOf(agent.token))[0]?.scopes, [calendarEvents]);
      const refused = await w.invoke(agent.token, 'mail_search', { query: 'x' });
      assert.equal((refused.body.error as { reason?: string }).reason, 'scope_not_granted');
      assert.equal((await w.invoke(agent.token, 'calendar_list', {})).status, 200);
    });

    test('a replayed state: the second arrival gets the unknown-link page and exchanges nothing', async () => {
      const user = await w.oauthUser();
      const exchanges = w.oauth.grants('authorization_code');
      const replay = await w.callback(user.back);
      assert.equal(replay.status, 400);
      assert.match(replay.text, /unknown or used link/);
      assert.equal(w.oauth.grants('authorization_code'), exchanges);
    });

    test('a foreign state: B’s code under A’s state is refused (PKCE), A stays unconnected and A’s state is spent; B still connects', async () => {
      const a = await w.s.agent();
      const b = await w.s.agent();
      const flowA = await w.begin(a.token);
      const flowB = await w.begin(b.token);
      const backB = await w.oauth.authorize(flowB.url.toString());
      const crossed = await w.callback({ state: flowA.params.state as string, code: backB.code as string });
      assert.equal(crossed.status, 400);
      assert.match(crossed.text, /code refused/);
      assert.deepEqual(await connectionsOf(a.token), []);
      assert.equal((await w.callback({ state: flowA.params.state as string, code: backB.code as string })).status, 400);
      const own = await w.callback(backB);
      assert.equal(own.status, 200, own.text);
      assert.equal((await connectionsOf(b.token)).length, 1);
      assert.deepEqual(await connectionsOf(a.token), []);
    });

    test('a made-up, missing or oversized state: clear 400 pages, nothing exchanged', async () => {
      const exchanges = w.oauth.calls.length;
      const madeUp = await w.callback({ state: 'x'.repeat(43), code: 'whatever' });
      assert.equal(madeUp.status, 400);
      assert.match(madeUp.text, /unknown or used link/);
      const missing = await w.callback({ code: 'whatever' });
      assert.equal(missing.status, 400);
      assert.match(missing.text, /no state/);
      assert.equal((await w.callback({ state: 'x'.repeat(129), code: 'c' })).status, 400);
      // Repeated parameters are not a single state.
      assert.equal((await w.s.call('GET', '/v1/connect/callback?state=a&state=b&code=c', { bearer: null })).status, 400);
      assert.equal(w.oauth.calls.length, exchanges);
    });

    test('the provider’s error (access_denied): a page naming it, escaped; nothing stored, the state spent', async () => {
      const agent = await w.s.agent();
      w.oauth.decide({ error: 'access_denied', description: 'the user said no' });
      let back: Record<string, string>;
      try {
        back = await w.oauth.authorize((await w.begin(agent.token)).url.toString());
      } finally {
        w.oauth.decide({ account: 'user-1' });
      }
      assert.equal(back.error, 'access_denied');
      const page = await w.callback(back);
      assert.equal(page.status, 400);
      assert.match(page.text, /answered &quot;access_denied&quot;/);
      assert.deepEqual(await connectionsOf(agent.token), []);
      assert.equal((await w.callback(back)).status, 400);
      const { params } = await w.begin(agent.token);
      const hostile = await w.callback({ state: params.state as string, error: '<script>alert(1)</script>' });
      assert.equal(hostile.status, 400);
      assert.doesNotMatch(hostile.text, /<script/);
    });

    test('a code used already (invalid_grant): the code-refused page, nothing stored', async () => {
      const agent = await w.s.agent();
      const back = await w.oauth.authorize((await w.begin(agent.token)).url.toString());
      await w.oauth.consumeCode(back.code as string);
      const page = await w.callback(back);
      assert.equal(page.status, 400);
      assert.match(page.text, /code refused.*invalid_grant/);
      assert.deepEqual(await connectionsOf(agent.token), []);
    });

    test('no refresh token in the answer: the no-offline-access page, nothing stored', async () => {
      const agent = await w.s.agent();
      w.oauth.issueRefreshTokens = false;
      try {
        const page = await w.callback(await w.oauth.authorize((await w.begin(agent.token)).url.toString()));
        assert.equal(page.status, 400);
        assert.match(page.text, /no offline access/);
      } finally {
        w.oauth.issueRefreshTokens = true;
      }
      assert.deepEqual(await connectionsOf(agent.token), []);
    });

    test('the token endpoint failing (503): a 502 page, nothing stored', async () => {
      const agent = await w.s.agent();
      const back = await w.oauth.authorize((await w.begin(agent.token)).url.toString());
      w.oauth.failNext('token', 503);
      const page = await w.callback(back);
      assert.equal(page.status, 502);
      assert.match(page.text, /provider unavailable/);
      assert.deepEqual(await connectionsOf(agent.token), []);
    });

    test('an unknown connector is 404; a body over the limit is 413, one at it is read (and its field refused)', async () => {
      const agent = await w.s.agent();
      const unknown = await w.s.call('POST', '/v1/connect', { token: agent.token, body: { connector: 'dropbox' } });
      assert.equal(unknown.status, 404);
      assert.match(unknown.body.error?.message ?? '', /no connector "dropbox"/);
      const frame = '{"connector":""}';
      const atLimit = `{"connector":"${'a'.repeat(connectorLimits.bodyBytes - frame.length)}"}`;
      assert.equal(atLimit.length, connectorLimits.bodyBytes);
      const headers = { authorization: 'Bearer test-transport-token', 'x-connector-agent': agent.token, 'content-type': 'application/json' };
      const at = await w.s.app.inject({ method: 'POST', url: '/v1/connect', headers, payload: atLimit });
      assert.equal(at.statusCode, 400);
      assert.match(at.json().error.message, /must NOT have more than 64 characters/);
      const over = await w.s.app.inject({ method: 'POST', url: '/v1/connect', headers, payload: `${atLimit} ` });
      assert.equal(over.statusCode, 413);
    });
  });

  describe(`connect-state expiry on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine);
    });
    after(() => w.close());

    test('at most 10 open connect flows per user: the 11th is 429 rate_limited; a finished or expired flow frees a place; others unaffected', async () => {
      const agent = await w.s.agent();
      const limit = connectorLimits.pendingConnectsPerOwner;
      const begun = [];
      for (let i = 0; i < limit; i++) begun.push(await w.begin(agent.token));
      const refused = await w.s.call('POST', '/v1/connect', { token: agent.token, body: { connector: connectorId } });
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.body.error?.code, 'rate_limited');
      assert.equal((refused.body.error as { reason?: string } | undefined)?.reason, 'too_many_pending_connects');
      const other = await w.s.agent();
      assert.equal((await w.s.call('POST', '/v1/connect', { token: other.token, body: { connector: connectorId } })).status, 200, 'another user');
      // Finishing one flow (here: the provider's refusal, which spends the state) frees a place.
      const first = begun[0] as Awaited<ReturnType<Workspace['begin']>>;
      await w.callback({ state: first.params.state as string, error: 'access_denied' });
      assert.equal((await w.s.call('POST', '/v1/connect', { token: agent.token, body: { connector: connectorId } })).status, 200);
      assert.equal((await w.s.call('POST', '/v1/connect', { token: agent.token, body: { connector: connectorId } })).status, 429);
      // Once they expire (the workspace's TTL is 10 min), the user may begin again.
      w.s.clock.advance(600_000);
      assert.equal((await w.s.call('POST', '/v1/connect', { token: agent.token, body: { connector: connectorId } })).status, 200);
    });

    test('a flow finished 1 ms before its TTL connects; one finished at the TTL gets the expired page and stores nothing', async () => {
      const early = await w.s.agent();
      const late = await w.s.agent();
      const backEarly = await w.oauth.authorize((await w.begin(early.token)).url.toString());
      const backLate = await w.oauth.authorize((await w.begin(late.token)).url.toString());
      w.s.clock.advance(w.settings.stateTtlMs - 1);
      assert.equal((await w.callback(backEarly)).status, 200);
      w.s.clock.advance(1);
      const expired = await w.callback(backLate);
      assert.equal(expired.status, 400);
      assert.match(expired.text, /link expired/);
      assert.deepEqual((await w.s.call('GET', '/v1/connections', { token: late.token })).body.data.connections, []);
      // Consumed even though expired: the same link then is unknown.
      assert.match((await w.callback(backLate)).text, /unknown or used link/);
      assert.equal(w.oauth.grants('authorization_code'), 1);
    });
  });

  describe(`connect without an OAuth client on ${engine.name}`, () => {
    test('503 unavailable, not retryable, naming the settings', async () => {
      const s = await startConnector(engine);
      try {
        const agent = await s.agent();
        const answer = await s.call('POST', '/v1/connect', { token: agent.token, body: { connector: connectorId } });
        assert.equal(answer.status, 503);
        assert.deepEqual([answer.body.error?.code, answer.body.error?.retryable], ['unavailable', false]);
        assert.match(answer.body.error?.message ?? '', /CONNECTOR_GOOGLE_CLIENT_ID and CONNECTOR_GOOGLE_CLIENT_SECRET/);
      } finally {
        await s.close();
      }
    });
  });
}
