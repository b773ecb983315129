import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { gatewayOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { testEngines } from '@platform/testkit/databases';
import { callerHeaders, type Gateway, gatewayToken, models, startGateway } from './harness.ts';

const chat = { model: models.small, messages: [{ role: 'user', content: 'hello' }], max_tokens: 10 };
const owners = new OwnerTokens(gatewayToken, gatewayOwnerTokens);

for (const engine of testEngines()) {
  describe(`gateway owner tokens on ${engine.name}`, () => {
    let gw: Gateway;
    const suffix = randomBytes(4).toString('hex');
    const aliceUser = `alice-${suffix}`;
    const alice = `did:platform:${aliceUser}:${randomBytes(8).toString('hex')}`;
    const bob = `did:platform:bob-${suffix}:${randomBytes(8).toString('hex')}`;
    const aliceBearer = owners.mint(aliceUser);
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    const completions = (bearer: string, actor: string) => gw.http('POST', '/v1/chat/completions', { bearer, headers: callerHeaders(actor), body: chat });
    const forwarded = () => gw.upstream.received.length;

    test("alice's daemon cannot spend as bob, nor as a wallet or another DID method, nor read bob's usage: 403, nothing forwarded or booked", async () => {
      const before = forwarded();
      for (const actor of [bob, `0x${'ab'.repeat(20)}`, `did:key:${aliceUser}`, `did:platform:${aliceUser}x:0123456789abcdef`]) {
        const answer = await completions(aliceBearer, actor);
        assert.equal(answer.status, 403, `${actor}: ${answer.text}`);
        assert.equal(answer.json.error.code, 'forbidden');
        assert.equal(answer.json.error.type, 'permission_error');
      }
      const usage = await gw.http('GET', '/v1/usage', { bearer: aliceBearer, headers: { 'x-platform-actor-did': bob } });
      assert.equal(usage.status, 403, usage.text);
      assert.equal(forwarded(), before, 'nothing reached the model');
      assert.deepEqual(await gw.spend(bob), { spent: 0n, reserved: 0n, calls: 0 }, 'nothing booked to bob');
    });

    test("alice's daemon spends as alice and reads her usage", async () => {
      const answer = await completions(aliceBearer, alice);
      assert.equal(answer.status, 200, answer.text);
      assert.equal((await gw.spend(alice)).calls, 1);
      const usage = await gw.http('GET', '/v1/usage', { bearer: aliceBearer, headers: { 'x-platform-actor-did': alice } });
      assert.equal(usage.status, 200, usage.text);
      assert.equal(usage.json.actor, alice);
      assert.equal((await gw.http('GET', '/v1/models', { bearer: aliceBearer })).status, 200);
    });

    test('the root token still meters any actor, and an owner token opens no operator route', async () => {
      assert.equal((await completions(gatewayToken, bob)).status, 200);
      assert.equal((await gw.spend(bob)).calls, 1);
      const admin = await gw.http('GET', `/v1/admin/actors/${encodeURIComponent(alice)}/cap`, { bearer: aliceBearer });
      assert.equal(admin.status, 401);
    });

    test('a forged or tampered owner token is 401', async () => {
      const mac = aliceBearer.slice(aliceBearer.lastIndexOf('.') + 1);
      for (const bearer of [
        new OwnerTokens('another-root', gatewayOwnerTokens).mint(aliceUser),
        `gw1.bob-${suffix}.${mac}`,
        `${aliceBearer.slice(0, -3)}AAA`,
      ]) {
        const answer = await completions(bearer, alice);
        assert.equal(answer.status, 401, bearer);
        assert.equal(answer.json.error.code, 'unauthorized');
      }
      assert.equal((await gw.spend(alice)).calls, 1);
    });
  });
}
