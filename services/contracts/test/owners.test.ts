import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { contractOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { testEngines } from '@platform/testkit/databases';
import { counter } from './fixtures/projects.ts';
import { alice, bob, type Contracts, startContracts, transportToken, useTestChain } from './harness.ts';

const chain = useTestChain();
const owners = new OwnerTokens(transportToken, contractOwnerTokens);
const aliceToken = owners.mint('alice');

for (const engine of testEngines()) {
  describe(`contract engine owner tokens on ${engine.name}`, () => {
    let c: Contracts;
    before(async () => {
      c = await startContracts(engine, { localRpcUrl: chain.url });
      await c.call('POST', '/v1/compile', { body: { sources: counter, project_id: 'owners' } });
    });
    after(() => c.close());

    const deployBody = (key: string) => ({ idempotency_key: key, chain_id: 'local', contract: 'Counter', project_id: 'owners', constructor_args: [1] });
    const wallets = async () => (await c.database.db.selectFrom('wallets').select('did').execute()).map((row) => row.did).sort();

    test("alice's daemon cannot deploy, call or simulate with bob's wallet: 403 and no wallet, no transaction", async () => {
      const deploy = await c.call('POST', '/v1/deploy', { bearer: aliceToken, caller: bob, body: deployBody('as-bob') });
      assert.equal(deploy.status, 403, JSON.stringify(deploy.body));
      assert.equal(deploy.body.error?.code, 'forbidden');
      const simulate = await c.call('POST', '/v1/simulate', {
        bearer: aliceToken,
        caller: bob,
        body: { chain_id: 'local', to: `0x${'11'.repeat(20)}`, data: '0x' },
      });
      assert.equal(simulate.status, 403);
      const rpc = await c.call('POST', '/rpc', {
        bearer: aliceToken,
        caller: bob,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'deploy', arguments: deployBody('as-bob-rpc') } },
      });
      assert.equal(rpc.status, 403, 'the JSON-RPC door checks the caller too');
      // Another spelling of a DID, or a DID of another method, is no way around the owner.
      const other = await c.call('POST', '/v1/deploy', { bearer: aliceToken, caller: 'did:key:z6Mkalice', body: deployBody('as-key') });
      assert.equal(other.status, 403);
      const prefixed = await c.call('POST', '/v1/deploy', {
        bearer: aliceToken,
        caller: 'did:platform:alice2:0123456789abcdef',
        body: deployBody('as-alice2'),
      });
      assert.equal(prefixed.status, 403);
      assert.deepEqual(await wallets(), [], 'no wallet was made, so nothing was signed');
      assert.equal((await c.database.db.selectFrom('deployments').select('address').execute()).length, 0);
    });

    test("alice's daemon deploys with alice's wallet, under any spelling of her DID", async () => {
      const deploy = await c.call('POST', '/v1/deploy', { bearer: aliceToken, caller: alice, body: deployBody('as-alice') });
      assert.equal(deploy.status, 200, JSON.stringify(deploy.body));
      assert.equal(deploy.body.data.deployer_did, alice);
      const upper = await c.call('POST', '/v1/deploy', { bearer: aliceToken, caller: 'did:platform:alice:0123456789ABCDEF', body: deployBody('as-alice-2') });
      assert.equal(upper.status, 200);
      assert.deepEqual(await wallets(), [alice]);
      const read = await c.call('GET', '/v1/chains', { bearer: aliceToken });
      assert.equal(read.status, 200, 'reads without a caller need no owner');
    });

    test('the root token still acts as anyone', async () => {
      const deploy = await c.call('POST', '/v1/deploy', { caller: bob, body: deployBody('root-as-bob') });
      assert.equal(deploy.status, 200, JSON.stringify(deploy.body));
      assert.deepEqual(await wallets(), [alice, bob]);
    });

    test('a forged or tampered owner token is 401', async () => {
      const forged = new OwnerTokens('another-root', contractOwnerTokens).mint('bob');
      const mac = aliceToken.slice(aliceToken.lastIndexOf('.') + 1);
      for (const bearer of [forged, `ctr1.bob.${mac}`, `${aliceToken.slice(0, -3)}AAA`, 'ctr1.alice']) {
        const response = await c.call('POST', '/v1/deploy', { bearer, caller: bob, body: deployBody('forged') });
        assert.equal(response.status, 401, bearer);
        assert.equal(response.body.error?.code, 'unauthorized');
      }
      assert.deepEqual(await wallets(), [alice, bob]);
    });
  });
}
