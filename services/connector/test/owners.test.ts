import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type AgentKey, generateAgentKey } from '@platform/client/agent-key';
import { connectorOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { testEngines } from '@platform/testkit/databases';
import { type Connector, startConnector, transportToken } from './harness.ts';

const scopes = ['https://www.googleapis.com/auth/calendar.readonly'];

for (const engine of testEngines()) {
  describe(`connector owner tokens on ${engine.name}`, () => {
    let c: Connector;
    const alice = randomUUID();
    const bob = randomUUID();
    const owners = new OwnerTokens(transportToken, connectorOwnerTokens);
    const aliceBearer = owners.mint(alice);
    before(async () => {
      c = await startConnector(engine);
      await c.seed(bob, scopes);
    });
    after(() => c.close());

    const challenge = (key: AgentKey, bearer: string) => c.call('POST', '/v1/agent/auth/challenge', { bearer, body: { did: key.did } });
    const verify = (key: AgentKey, bearer: string, nonce: string, message: string) =>
      c.call('POST', '/v1/agent/auth/verify', { bearer, body: { did: key.did, public_key: key.publicKeyHex, nonce, signature: key.sign(message) } });
    const bobsConnection = async () => (await c.repository.listOwned(bob)).map((connection) => connection.connector);

    test("alice's proxy cannot claim bob's user id with its own key: the handshake is 403 and issues nothing", async () => {
      const claimed = generateAgentKey(bob);
      const asked = await challenge(claimed, aliceBearer);
      assert.equal(asked.status, 403, asked.text);
      assert.equal(asked.body.error?.code, 'forbidden');
      const issued = await challenge(claimed, transportToken);
      const answered = await verify(claimed, aliceBearer, issued.body.data.nonce, issued.body.data.message);
      assert.equal(answered.status, 403, 'nor a principal token for a nonce issued otherwise');
      assert.equal((await verify(claimed, transportToken, issued.body.data.nonce, issued.body.data.message)).status, 200, 'the nonce was not consumed');
    });

    test("a principal token of bob's under alice's bearer is 403 on every route: bob's connection is neither listed, used nor dropped", async () => {
      const bobs = await c.agent(generateAgentKey(bob));
      for (const [method, url, body] of [
        ['GET', '/v1/connections', undefined],
        ['POST', '/v1/invoke', { connector: 'google-workspace', tool: 'calendar_list', arguments: {} }],
        ['POST', '/v1/connect', { connector: 'google-workspace' }],
        ['POST', '/v1/disconnect', { connector: 'google-workspace' }],
      ] as const) {
        const answer = await c.call(method, url, { bearer: aliceBearer, token: bobs.token, ...(body && { body }) });
        assert.equal(answer.status, 403, `${url}: ${answer.text}`);
        assert.equal(answer.body.error?.code, 'forbidden');
      }
      assert.deepEqual(await bobsConnection(), ['google-workspace'], "bob's connection is still there");
    });

    test("alice's proxy works as alice: handshake, then her own (empty) connections", async () => {
      const key = generateAgentKey(alice.toUpperCase());
      const issued = await challenge(key, aliceBearer);
      assert.equal(issued.status, 200, issued.text);
      const answered = await verify(key, aliceBearer, issued.body.data.nonce, issued.body.data.message);
      assert.equal(answered.status, 200, answered.text);
      assert.equal(answered.body.data.owner_user_id, alice);
      const listed = await c.call('GET', '/v1/connections', { bearer: aliceBearer, token: answered.body.data.token });
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(listed.body.data.connections, []);
    });

    test('the root token still serves any user', async () => {
      const bobs = await c.agent(generateAgentKey(bob));
      const listed = await c.call('GET', '/v1/connections', { token: bobs.token });
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.data.connections.map((connection: { connector: string }) => connection.connector),
        ['google-workspace'],
      );
    });

    test('a forged or tampered owner token is 401', async () => {
      const mac = aliceBearer.slice(aliceBearer.lastIndexOf('.') + 1);
      for (const bearer of [new OwnerTokens('another-root', connectorOwnerTokens).mint(bob), `cnx1.${bob}.${mac}`, `${aliceBearer.slice(0, -3)}AAA`]) {
        const answer = await challenge(generateAgentKey(bob), bearer);
        assert.equal(answer.status, 401, bearer);
      }
      assert.deepEqual(await bobsConnection(), ['google-workspace']);
    });
  });
}
