import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { deriveTokenKey, mintPrincipalToken } from '@platform/kit/auth/principal-token';
import { unixSeconds } from '@platform/kit/clock';
import { testEngines } from '@platform/testkit/databases';
import { principalHeader } from '../src/app.ts';
import { workspaceConnector } from '../src/connectors/workspace/definition.ts';
import { agentAuthSecret, type Connector, credentialFor, startConnector } from './harness.ts';

const [mailScope, calendarScope] = workspaceConnector.scopes.map((scope) => scope.id) as [string, string];

for (const engine of testEngines()) {
  describe(`connector routes on ${engine.name}`, () => {
    let s: Connector;
    before(async () => {
      s = await startConnector(engine);
    });
    after(() => s.close());

    describe('transport bearer', () => {
      test('GET / and GET /healthz need no bearer', async () => {
        assert.deepEqual((await s.call('GET', '/', { bearer: null })).body, { ok: true, data: { service: 'connector', version: '0.1.0', health: '/healthz' } });
        assert.equal((await s.call('GET', '/healthz', { bearer: null })).status, 200);
      });
      test('a missing or wrong bearer is 401 on every other route, before the principal is looked at', async () => {
        const { token } = await s.agent();
        for (const [method, url] of [
          ['POST', '/v1/agent/auth/challenge'],
          ['POST', '/v1/agent/auth/verify'],
          ['GET', '/v1/connections'],
          ['GET', '/v1/connectors'],
        ] as const) {
          for (const bearer of [null, 'test-transport-tokeX', '']) {
            const response = await s.call(method, url, { bearer, token, ...(method === 'POST' ? { body: {} } : {}) });
            assert.equal(response.status, 401, `${url} with ${bearer}`);
            assert.equal(response.body.error?.code, 'unauthorized');
          }
        }
      });
    });

    describe('principal token', () => {
      test('the handshake signs platform-connector-auth and yields a token for /v1/connections', async () => {
        const key = generateAgentKey();
        const challenge = await s.call('POST', '/v1/agent/auth/challenge', { body: { did: key.did } });
        assert.equal(challenge.body.data.message, `platform-connector-auth:${key.did}:${challenge.body.data.nonce}`);
        const { token } = await s.agent(key);
        assert.equal((await s.call('GET', '/v1/connections', { token })).status, 200);
      });
      test('no token is 401 naming the header', async () => {
        const response = await s.call('GET', '/v1/connections');
        assert.equal(response.status, 401);
        assert.match(response.body.error?.message ?? '', new RegExp(principalHeader));
      });
      test('forged tokens are 401: another secret, another service, an altered payload, garbage', async () => {
        const key = generateAgentKey();
        const claims = { did: key.did, owner: 'victim', expiresAt: unixSeconds(s.clock.now()) + 3600 };
        const { token: real } = await s.agent(key);
        const [payload, mac] = real.split('.') as [string, string];
        const forged = [
          mintPrincipalToken(deriveTokenKey('another-secret', 'connector'), claims),
          mintPrincipalToken(deriveTokenKey(agentAuthSecret, 'scheduler'), claims),
          `${Buffer.from(`${key.did}|victim|${claims.expiresAt}`).toString('base64url')}.${mac}`,
          `${payload}.${mac.slice(0, -2)}AA`,
          'not-a-token',
        ];
        for (const token of forged) {
          const response = await s.call('GET', '/v1/connections', { token });
          assert.equal(response.status, 401, token);
          assert.match(response.body.error?.message ?? '', /invalid principal token/);
        }
      });
      test('a token works until its expiry second and is 401 from then on', async () => {
        const key = generateAgentKey();
        const token = mintPrincipalToken(deriveTokenKey(agentAuthSecret, 'connector'), {
          did: key.did,
          owner: 'someone',
          expiresAt: unixSeconds(s.clock.now()) + 60,
        });
        assert.equal((await s.call('GET', '/v1/connections', { token })).status, 200);
        s.clock.advance(60_000);
        const response = await s.call('GET', '/v1/connections', { token });
        assert.equal(response.status, 401);
        assert.match(response.body.error?.message ?? '', /expired/);
      });
    });

    describe('GET /v1/connections', () => {
      test("lists the caller's connections with their granted scopes and status, and no token material", async () => {
        const alice = await s.agent();
        const mine = credentialFor('alice');
        await s.repository.save(alice.owner, workspaceConnector.id, [mailScope, calendarScope], mine);
        const response = await s.call('GET', '/v1/connections', { token: alice.token });
        assert.equal(response.status, 200);
        const [connection, ...rest] = response.body.data.connections;
        assert.equal(rest.length, 0);
        assert.deepEqual(Object.keys(connection).sort(), ['connected_at', 'connector', 'id', 'scopes', 'status', 'updated_at']);
        assert.equal(connection.connector, 'google-workspace');
        assert.equal(connection.status, 'connected');
        assert.deepEqual(connection.scopes, [mailScope, calendarScope]);
        assert.equal(connection.connected_at, s.clock.now().toISOString());
        for (const secret of [mine.accessToken, mine.refreshToken, 'ya29.', '1//']) assert.ok(!response.text.includes(secret), secret);
        assert.doesNotMatch(response.text, /access_token|refresh_token|ciphertext|key_id|"iv"|"tag"/);
      });
      test("another owner's connection is not visible; needs_reconnect shows as such", async () => {
        const bob = await s.agent();
        const carol = await s.agent();
        const bobs = credentialFor('bob');
        await s.repository.save(bob.owner, workspaceConnector.id, [mailScope], bobs);
        await s.repository.setStatus(bob.owner, workspaceConnector.id, 'needs_reconnect');
        const forCarol = await s.call('GET', '/v1/connections', { token: carol.token });
        assert.deepEqual(forCarol.body, { ok: true, data: { connections: [] } });
        assert.ok(!forCarol.text.includes(bobs.accessToken));
        const forBob = await s.call('GET', '/v1/connections', { token: bob.token });
        assert.deepEqual(
          forBob.body.data.connections.map((c: { status: string; scopes: string[] }) => [c.status, c.scopes]),
          [['needs_reconnect', [mailScope]]],
        );
      });
      test('the owner is the DID label of the verified token: the same label with another key sees the same connections', async () => {
        const label = '8F1C2D3E-4A5B-4C6D-8E9F-0A1B2C3D4E5F';
        const first = await s.agent(generateAgentKey(label));
        assert.equal(first.owner, label.toLowerCase());
        await s.repository.save(first.owner, workspaceConnector.id, [calendarScope], credentialFor('label'));
        const second = await s.agent(generateAgentKey(label));
        assert.equal((await s.call('GET', '/v1/connections', { token: second.token })).body.data.connections.length, 1);
      });
    });

    describe('GET /v1/connectors', () => {
      test('the catalogue: the workspace connector, its two scopes and six tools, consequential ones marked', async () => {
        const response = await s.call('GET', '/v1/connectors');
        assert.equal(response.status, 200);
        const [workspace] = response.body.data.connectors;
        assert.equal(workspace.id, 'google-workspace');
        assert.deepEqual(
          workspace.scopes.map((scope: { id: string }) => scope.id),
          [mailScope, calendarScope],
        );
        assert.deepEqual(
          workspace.tools.map((tool: { name: string; scope: string; consequential: boolean }) => [
            tool.name,
            tool.scope === mailScope ? 'mail' : 'calendar',
            tool.consequential,
          ]),
          [
            ['mail_send', 'mail', true],
            ['mail_search', 'mail', false],
            ['mail_read', 'mail', false],
            ['calendar_list', 'calendar', false],
            ['calendar_create', 'calendar', true],
            ['calendar_update', 'calendar', true],
          ],
        );
        assert.deepEqual(workspace.tools[0].arguments.required, ['to', 'subject', 'body']);
      });
    });
  });
}
