import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import type { Address } from 'viem';
import { KeyVault } from '../src/wallet/key-vault.ts';
import { nonceOf } from './chain-client.ts';
import { counter } from './fixtures/projects.ts';
import { alice, type Contracts, startContracts, useTestChain, walletKeyHex } from './harness.ts';

const chain = useTestChain();

const ether = 10n ** 18n;

for (const engine of testEngines()) {
  describe(`embedded wallet and custody policy on ${engine.name}`, () => {
    let c: Contracts;
    const bodies: string[] = [];
    before(async () => {
      c = await startContracts(engine, { localRpcUrl: chain.url, policy: { spendCapWei: ether, dailyCapWei: ether } });
      await c.call('POST', '/v1/compile', { body: { sources: counter, project_id: 'wallet-test' } });
    });
    after(() => c.close());

    async function deploy(key: string, extra: Record<string, unknown> = {}, caller = alice) {
      const response = await c.call('POST', '/v1/deploy', {
        caller,
        body: { idempotency_key: key, chain_id: 'local', contract: 'Counter', project_id: 'wallet-test', constructor_args: [1], ...extra },
      });
      bodies.push(JSON.stringify(response.body));
      return response;
    }

    test('one wallet per DID, made on first use; spellings of one platform DID share it', async () => {
      const first = await deploy('w1');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const upper = await deploy('w2', {}, 'did:platform:alice:0123456789ABCDEF');
      assert.equal(upper.body.data.deployer, first.body.data.deployer);
      assert.equal(upper.body.data.deployer_did, alice);
      const rows = await c.database.db.selectFrom('wallets').selectAll().execute();
      assert.equal(rows.length, 1);
    });

    test('the daily cap counts value plus maximum fee over 24 hours, then frees up', async () => {
      const paying = await deploy('pay-1', { value: (ether / 2n).toString() });
      assert.equal(paying.status, 200, JSON.stringify(paying.body));
      assert.equal(await chain.client.getBalance({ address: paying.body.data.address as Address }), ether / 2n);
      const deployer = paying.body.data.deployer as Address;
      const nonce = await nonceOf(chain.client, deployer);
      const refused = await deploy('pay-2', { value: (ether / 2n).toString() });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error?.reason, 'daily_cap_exceeded');
      assert.equal(refused.body.error?.daily_cap_wei, ether.toString());
      assert.equal(await nonceOf(chain.client, deployer), nonce, 'nothing was signed');
      c.clock.advance(24 * 3600 * 1000 + 1);
      const later = await deploy('pay-2', { value: (ether / 2n).toString() });
      assert.equal(later.status, 200, JSON.stringify(later.body));
    });

    test('a chain the policy does not allow is refused before signing', async () => {
      const registered = await c.call('POST', '/v1/chains', { body: { id: 'devnet', name: 'Dev net', rpc_url: chain.url, chain_id: 31337 } });
      assert.equal(registered.status, 200);
      const response = await deploy('elsewhere', { chain_id: 'devnet' });
      assert.equal(response.status, 403);
      assert.equal(response.body.error?.reason, 'chain_not_allowed');
    });

    test('a per-transaction cap above the policy cannot raise it', async () => {
      const response = await deploy('big', { value: (2n * ether).toString(), spend_cap_wei: (10n * ether).toString() });
      assert.equal(response.status, 403);
      assert.equal(response.body.error?.reason, 'spend_cap_exceeded');
      assert.equal(response.body.error?.cap_wei, ether.toString());
    });

    test('the private key never leaves the engine and is stored only sealed', async () => {
      const row = await c.database.db.selectFrom('wallets').selectAll().where('did', '=', alice).executeTakeFirstOrThrow();
      const privateKey = new KeyVault(walletKeyHex).open(row.sealed_key, alice);
      const hex = privateKey.slice(2);
      for (const body of bodies) assert.ok(!body.toLowerCase().includes(hex), 'a response carried the key');
      assert.ok(!JSON.stringify(row).toLowerCase().includes(hex));
      const listed = await c.call('GET', '/v1/registry/deployments');
      assert.ok(!JSON.stringify(listed.body).toLowerCase().includes(hex));
    });
  });
}
