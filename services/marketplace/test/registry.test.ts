import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { testEngines } from '@platform/testkit/databases';
import { startTestChain, type TestChain } from '@platform/testkit/test-chain';
import { createPublicClient, getAddress, type Hex, http } from 'viem';
import { registryAbi, serviceKey } from '../src/registry/registry-contract.ts';
import { createListing, type Developer, publishListing, signIn, testManifest } from './developer-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

/** What the chain says about a listing, read with viem alone. */
async function onChain(chain: TestChain, registry: Hex, listingId: string) {
  const client = createPublicClient({ transport: http(chain.url) });
  const [owner, manifestHash] = await client.readContract({ address: registry, abi: registryAbi, functionName: 'services', args: [serviceKey(listingId)] });
  return { owner: getAddress(owner), manifestHash };
}

describe('the on-chain service registry', () => {
  let chain: TestChain;
  before(async () => {
    chain = await startTestChain();
  });
  after(async () => chain?.stop());

  for (const engine of testEngines()) {
    describe(`publishing on ${engine.name}`, () => {
      let m: Marketplace;
      let dev: Developer;
      let dataDir: string;
      before(async () => {
        dataDir = mkdtempSync(join(tmpdir(), 'marketplace-registry-'));
        m = await startMarketplace(engine, { env: { MARKETPLACE_RPC_URL: chain.url, DATA_DIR: dataDir } });
        dev = await signIn(m);
      });
      after(async () => {
        await m?.close();
        rmSync(dataDir, { recursive: true, force: true });
      });

      test('publish registers the listing (id, manifest hash, owner) and the listing shows the transaction', async () => {
        const draft = await createListing(m, dev, { manifest: testManifest({ display_name: `Chain ${engine.name}` }) });
        const published = await m.call('POST', `/v1/services/${draft.id}/publish`, { headers: dev.headers });
        assert.equal(published.status, 200, JSON.stringify(published.body));
        const listing = published.body.data;
        assert.equal(listing.status, 'active');
        assert.equal(listing.registry.status, 'registered');
        assert.match(listing.registry.tx_hash, /^0x[0-9a-f]{64}$/);
        assert.match(listing.registry.block, /^[1-9][0-9]*$/);
        assert.equal(listing.registry.manifest_hash, listing.manifest_hash);
        const info = await m.call('GET', '/v1/registry');
        assert.equal(info.body.data.enabled, true);
        assert.equal(info.body.data.operator, m.identity.signer.address);
        const registry = info.body.data.address as Hex;
        assert.deepEqual(await onChain(chain, registry, draft.id), { owner: dev.address, manifestHash: listing.manifest_hash });
        const saved = JSON.parse(readFileSync(join(dataDir, 'registry-31337.json'), 'utf8'));
        assert.equal(saved.registry, registry, 'the development registry is remembered in DATA_DIR');
        const receipt = await createPublicClient({ transport: http(chain.url) }).getTransactionReceipt({ hash: listing.registry.tx_hash });
        assert.equal(receipt.blockNumber.toString(), listing.registry.block);
      });

      test('a changed manifest is recorded again on the next publish; an unchanged one sends nothing', async () => {
        const draft = await createListing(m, dev);
        const publish = async () => {
          const answer = await m.call('POST', `/v1/services/${draft.id}/publish`, { headers: dev.headers });
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          return answer.body.data;
        };
        const first = await publish();
        const again = await publish();
        assert.equal(again.registry.tx_hash, first.registry.tx_hash, 'nothing to record: no transaction');
        const patched = await m.call('PATCH', `/v1/services/${draft.id}`, {
          headers: dev.headers,
          body: { manifest: testManifest({ summary: 'Now with rain' }) },
        });
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
        assert.equal(patched.body.data.registry.manifest_hash, first.manifest_hash, 'the chain trails until the next publish');
        const republished = await publish();
        assert.notEqual(republished.registry.tx_hash, first.registry.tx_hash);
        assert.equal(republished.registry.manifest_hash, patched.body.data.manifest_hash);
        const registry = (await m.call('GET', '/v1/registry')).body.data.address as Hex;
        assert.equal((await onChain(chain, registry, draft.id)).manifestHash, patched.body.data.manifest_hash);
      });

      test('another marketplace on the same DATA_DIR uses the registry already deployed', async () => {
        const first = (await m.call('GET', '/v1/registry')).body.data.address;
        const second = await startMarketplace(engine, { env: { MARKETPLACE_RPC_URL: chain.url, DATA_DIR: dataDir } });
        try {
          assert.equal((await second.call('GET', '/v1/registry')).body.data.address, first);
        } finally {
          await second.close();
        }
      });
    });
  }

  test('a configured registry address is used as it is, and concurrent publishes all land', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'marketplace-registry-'));
    const [engine] = testEngines();
    const deployer = await startMarketplace(engine as never, { env: { MARKETPLACE_RPC_URL: chain.url, DATA_DIR: dataDir } });
    const address = (await deployer.call('GET', '/v1/registry')).body.data.address as string;
    await deployer.close();
    const m = await startMarketplace(engine as never, {
      env: { MARKETPLACE_RPC_URL: chain.url, MARKETPLACE_REGISTRY_ADDRESS: address, DATA_DIR: join(dataDir, 'other') },
    });
    try {
      const dev = await signIn(m);
      const drafts = await Promise.all([1, 2, 3, 4].map(() => createListing(m, dev)));
      const published = await Promise.all(drafts.map((draft) => m.call('POST', `/v1/services/${draft.id}/publish`, { headers: dev.headers })));
      for (const answer of published) assert.equal(answer.body.data?.registry.status, 'registered', JSON.stringify(answer.body));
      for (const draft of drafts) assert.equal((await onChain(chain, address as Hex, draft.id)).owner, dev.address);
    } finally {
      await m.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a chain that cannot be reached: publish is 503, the listing stays a draft and shows the failure', async () => {
    const [engine] = testEngines();
    const m = await startMarketplace(engine as never, {
      env: { MARKETPLACE_RPC_URL: 'http://127.0.0.1:9', MARKETPLACE_REGISTRY_ADDRESS: `0x${'12'.repeat(20)}` },
    });
    try {
      const dev = await signIn(m);
      const draft = await createListing(m, dev);
      const refused = await m.call('POST', `/v1/services/${draft.id}/publish`, { headers: dev.headers });
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.error, 'service_unavailable');
      assert.equal(refused.body.detail.reason, 'registry_failed');
      assert.equal(refused.body.detail.retryable, true);
      const row = await m.database.db.selectFrom('listings').select(['status', 'registry_status']).where('id', '=', draft.id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'draft', registry_status: 'failed' });
    } finally {
      await m.close();
    }
  });

  test('an address without the registry outside development: publish is 503, not retryable, nothing recorded', async () => {
    const [engine] = testEngines();
    const m = await startMarketplace(engine as never, {
      env: { MARKETPLACE_DEV: 'false', MARKETPLACE_RPC_URL: chain.url, MARKETPLACE_REGISTRY_ADDRESS: `0x${'34'.repeat(20)}` },
    });
    try {
      const dev = await signIn(m);
      const draft = await createListing(m, dev);
      const refused = await m.call('POST', `/v1/services/${draft.id}/publish`, { headers: dev.headers });
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.detail.retryable, false);
      assert.match(refused.body.message, /no ServiceRegistry operated by/);
    } finally {
      await m.close();
    }
  });

  test('an update mined a few seconds after it was estimated still lands (the gas limit is not the bare estimate)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'marketplace-registry-'));
    const [engine] = testEngines();
    const m = await startMarketplace(engine as never, { env: { MARKETPLACE_RPC_URL: chain.url, DATA_DIR: dataDir } });
    try {
      const dev = await signIn(m);
      const listing = await publishListing(m, dev);
      const patched = await m.call('PATCH', `/v1/services/${listing.id}`, { headers: dev.headers, body: { manifest: testManifest({ summary: 'Later' }) } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      // As on a chain with block times: the update waits in the pool and its block is stamped later than the estimate
      // saw, so rewriting the stored updatedAt costs 2,800 gas more than estimated.
      await chain.setAutomine(false);
      const republishing = m.call('POST', `/v1/services/${listing.id}/publish`, { headers: dev.headers });
      try {
        while (Number((await chain.rpc<{ pending: string }>('txpool_status')).pending) === 0) await setImmediate();
        await chain.increaseTime(3);
        await chain.mine(1);
      } finally {
        await chain.setAutomine(true);
      }
      const republished = await republishing;
      assert.equal(republished.status, 200, JSON.stringify(republished.body));
      const registry = (await m.call('GET', '/v1/registry')).body.data.address as Hex;
      assert.equal((await onChain(chain, registry, listing.id)).manifestHash, patched.body.data.manifest_hash);
    } finally {
      await m.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  // Last: it rolls the chain back, taking every registry deployed after the snapshot with it.
  test('a development node started afresh: the registry is deployed again rather than registrations lost', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'marketplace-registry-'));
    const [engine] = testEngines();
    const snapshot = await chain.snapshot();
    const m = await startMarketplace(engine as never, { env: { MARKETPLACE_RPC_URL: chain.url, DATA_DIR: dataDir } });
    try {
      const dev = await signIn(m);
      const first = await publishListing(m, dev);
      assert.equal(first.registry.status, 'registered');
      await chain.revert(snapshot);
      const second = await publishListing(m, dev);
      assert.equal(second.registry.status, 'registered', JSON.stringify(second.registry));
      const registry = (await m.call('GET', '/v1/registry')).body.data.address as Hex;
      assert.equal((await onChain(chain, registry, second.id)).owner, dev.address);
    } finally {
      await m.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
