import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { type Address, parseAbi } from 'viem';
import { nonceOf } from './chain-client.ts';
import { counter } from './fixtures/projects.ts';
import { alice, bob, type Contracts, startContracts, useTestChain } from './harness.ts';

const chain = useTestChain();

const counterAbi = parseAbi(['function count() view returns (uint256)', 'function owner() view returns (address)']);

for (const engine of testEngines()) {
  describe(`deploy on ${engine.name}`, () => {
    let c: Contracts;
    let projectId: string;
    before(async () => {
      c = await startContracts(engine, { localRpcUrl: chain.url });
      projectId = (await c.call('POST', '/v1/compile', { body: { sources: counter, project_id: `counter-${engine.name}` } })).body.data.project_id;
    });
    after(() => c.close());

    const deploy = (key: string, body: Record<string, unknown> = {}, caller = alice) =>
      c.call('POST', '/v1/deploy', {
        caller,
        body: { idempotency_key: key, chain_id: 'local', contract: 'Counter', project_id: projectId, constructor_args: [7], ...body },
      });

    describe('happy path', () => {
      test("signs with the caller's wallet, waits for the receipt and records address, hash and state", async () => {
        const response = await deploy('first');
        assert.equal(response.status, 200, JSON.stringify(response.body));
        const data = response.body.data;
        assert.equal(data.status, 'confirmed');
        assert.match(data.address, /^0x[0-9a-fA-F]{40}$/);
        assert.match(data.tx_hash, /^0x[0-9a-f]{64}$/);
        assert.equal(data.chain, 'local');
        assert.equal(data.chain_id, 31337);
        assert.equal(data.replayed, false);
        // What the chain itself says, through viem.
        assert.equal(await chain.client.readContract({ address: data.address, abi: counterAbi, functionName: 'count' }), 7n);
        assert.equal(await chain.client.readContract({ address: data.address, abi: counterAbi, functionName: 'owner' }), data.deployer);
        const receipt = await chain.client.getTransactionReceipt({ hash: data.tx_hash });
        assert.equal(receipt.contractAddress?.toLowerCase(), data.address.toLowerCase());
      });

      test("a new wallet on the local chain is funded from the node's dev account", async () => {
        const response = await deploy('funded', {}, bob);
        const balance = await chain.client.getBalance({ address: response.body.data.deployer as Address });
        assert.ok(balance > 99n * 10n ** 18n && balance < 100n * 10n ** 18n, `balance ${balance}`);
      });

      test('the same key and chain return the recorded deployment and sign nothing', async () => {
        const first = await deploy('again');
        const nonce = await nonceOf(chain.client, first.body.data.deployer);
        const replay = await deploy('again');
        assert.equal(replay.status, 200);
        assert.equal(replay.body.data.replayed, true);
        assert.equal(replay.body.data.address, first.body.data.address);
        assert.equal(replay.body.data.tx_hash, first.body.data.tx_hash);
        assert.equal(await nonceOf(chain.client, first.body.data.deployer), nonce);
      });

      test('concurrent deploys with one key send one transaction; the others get the record, pending or done', async () => {
        const deployer = (await deploy('warm-up-wallet')).body.data.deployer as Address;
        const nonce = await nonceOf(chain.client, deployer);
        const responses = await Promise.all([deploy('race'), deploy('race'), deploy('race')]);
        for (const response of responses) assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.equal(await nonceOf(chain.client, deployer), nonce + 1);
        const hashes = new Set(responses.map((response) => response.body.data.tx_hash).filter((hash) => hash !== null));
        assert.ok(hashes.size <= 1);
        assert.equal(responses.filter((response) => !response.body.data.replayed).length, 1);
        const lookup = await c.call('GET', '/v1/registry/lookup?idempotency_key=race&chain_id=31337');
        assert.equal(lookup.body.data.status, 'confirmed');
        assert.equal(lookup.body.data.tx_hash, [...hashes][0] ?? lookup.body.data.tx_hash);
      });

      test('registry lookup and listing find recorded deployments; an unknown key is found=false', async () => {
        const deployed = await deploy('listed');
        const lookup = await c.call('GET', '/v1/registry/lookup?idempotency_key=listed&chain_id=local');
        assert.equal(lookup.status, 200);
        assert.equal(lookup.body.data.found, true);
        assert.equal(lookup.body.data.address, deployed.body.data.address);
        const missing = await c.call('GET', '/v1/registry/lookup?idempotency_key=never&chain_id=local');
        assert.deepEqual(missing.body.data, { found: false, idempotency_key: 'never', chain: 'local', chain_id: 31337 });
        const list = await c.call('GET', `/v1/registry/deployments?chain_id=local&deployer_did=${encodeURIComponent(alice)}&limit=2`);
        assert.equal(list.body.data.deployments.length, 2);
        assert.equal(list.body.data.deployments[0].idempotency_key, 'listed');
        const next = await c.call(
          'GET',
          `/v1/registry/deployments?chain_id=local&deployer_did=${encodeURIComponent(alice)}&limit=2&before=${list.body.data.next_before}`,
        );
        assert.equal(next.status, 200);
        const seen = new Set(list.body.data.deployments.map((entry: { idempotency_key: string }) => entry.idempotency_key));
        assert.ok(next.body.data.deployments.length > 0);
        for (const entry of next.body.data.deployments) assert.ok(!seen.has(entry.idempotency_key), 'pages do not overlap');
      });
    });

    describe('refusals', () => {
      test('the same key for another contract call, or from another caller, is 409 idempotency_key_reused', async () => {
        await deploy('owned');
        const otherArgs = await deploy('owned', { constructor_args: [8] });
        assert.equal(otherArgs.status, 409);
        assert.equal(otherArgs.body.error?.reason, 'idempotency_key_reused');
        const otherCaller = await deploy('owned', {}, bob);
        assert.equal(otherCaller.status, 409);
      });

      test('a deploy without the caller header is 400 naming it', async () => {
        const response = await c.call('POST', '/v1/deploy', {
          body: { idempotency_key: 'anon', chain_id: 'local', contract: 'Counter', project_id: projectId, constructor_args: [1] },
        });
        assert.equal(response.status, 400);
        assert.match(response.body.error?.message ?? '', /X-Platform-Actor-DID/);
        const malformed = await deploy('anon', {}, 'not-a-did');
        assert.equal(malformed.status, 400);
      });

      test('unknown contract and unknown chain are 404; bad constructor arguments are 400', async () => {
        const contract = await deploy('x-contract', { contract: 'Nope' });
        assert.equal(contract.status, 404);
        assert.match(contract.body.error?.message ?? '', /unknown contract "Nope"/);
        const chainRef = await deploy('x-chain', { chain_id: 'nowhere' });
        assert.equal(chainRef.status, 404);
        assert.match(chainRef.body.error?.message ?? '', /unknown chain/);
        for (const constructor_args of [['seven'], [], [1, 2], [-1.5]]) {
          const response = await deploy('x-args', { constructor_args });
          assert.equal(response.status, 400, JSON.stringify(constructor_args));
        }
        const missing = await c.call('POST', '/v1/deploy', { caller: alice, body: { chain_id: 'local', contract: 'Counter' } });
        assert.equal(missing.status, 400);
        assert.match(missing.body.error?.message ?? '', /idempotency_key/);
      });

      test('value plus maximum fee over spend_cap_wei is refused before signing, and the key stays free', async () => {
        const deployer = (await deploy('warm-up-cap')).body.data.deployer as Address;
        const nonce = await nonceOf(chain.client, deployer);
        const refused = await deploy('capped', { spend_cap_wei: '1000' });
        assert.equal(refused.status, 403);
        assert.equal(refused.body.error?.reason, 'spend_cap_exceeded');
        assert.equal(refused.body.error?.cap_wei, '1000');
        assert.ok(BigInt(refused.body.error?.max_cost_wei as string) > 1000n);
        assert.equal(await nonceOf(chain.client, deployer), nonce, 'nothing was signed');
        const retried = await deploy('capped', { spend_cap_wei: '0x16345785d8a0000' });
        assert.equal(retried.status, 200);
        assert.equal(retried.body.data.status, 'confirmed');
      });
    });
  });
}
