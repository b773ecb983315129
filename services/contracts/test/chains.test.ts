import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { type Contracts, startContracts, useTestChain } from './harness.ts';

const chain = useTestChain();

for (const engine of testEngines()) {
  describe(`chains on ${engine.name}`, () => {
    let c: Contracts;
    before(async () => {
      c = await startContracts(engine, { localRpcUrl: chain.url });
    });
    after(() => c.close());

    test('lists the built-in profiles, local active, and never shows an RPC URL', async () => {
      const response = await c.call('GET', '/v1/chains');
      assert.equal(response.status, 200);
      assert.equal(response.body.data.active, 'local');
      const [mainnet, local] = response.body.data.chains;
      assert.deepEqual(mainnet, {
        id: 'primary-mainnet',
        name: 'Primary mainnet',
        chain_id: 125,
        explorer: null,
        builtin: true,
        rpc_configured: false,
        active: false,
      });
      assert.deepEqual(local, {
        id: 'local',
        name: 'Local development chain',
        chain_id: 31337,
        explorer: null,
        builtin: true,
        rpc_configured: true,
        active: true,
      });
      assert.doesNotMatch(JSON.stringify(response.body), /127\.0\.0\.1/);
    });

    test('registers a profile whose RPC answers its chain id; registering it again changes nothing', async () => {
      const body = { id: 'devnet', name: 'Dev net', rpc_url: chain.url, chain_id: 31337, explorer: 'https://explorer.example' };
      const first = await c.call('POST', '/v1/chains', { body });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(first.body.data, {
        id: 'devnet',
        name: 'Dev net',
        chain_id: 31337,
        explorer: 'https://explorer.example',
        builtin: false,
        rpc_configured: true,
        active: false,
      });
      assert.equal((await c.call('POST', '/v1/chains', { body })).status, 200);
      const list = await c.call('GET', '/v1/chains');
      assert.deepEqual(
        list.body.data.chains.map((profile: { id: string }) => profile.id),
        ['primary-mainnet', 'local', 'devnet'],
      );
    });

    test('refuses a profile whose RPC serves another chain id, and an id taken by other settings', async () => {
      const mismatch = await c.call('POST', '/v1/chains', { body: { id: 'wrong', name: 'Wrong', rpc_url: chain.url, chain_id: 1 } });
      assert.equal(mismatch.status, 409);
      assert.equal(mismatch.body.error?.reason, 'chain_id_mismatch');
      assert.equal(mismatch.body.error?.answered, 31337);
      const taken = await c.call('POST', '/v1/chains', { body: { id: 'devnet', name: 'Another', rpc_url: chain.url, chain_id: 31337 } });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.error?.reason, 'chain_exists');
      const builtin = await c.call('POST', '/v1/chains', { body: { id: 'local', name: 'Mine', rpc_url: chain.url, chain_id: 31337 } });
      assert.equal(builtin.status, 409);
    });

    test('bad registrations: id, URL, chain id, missing fields are 400; an RPC that does not answer is 503', async () => {
      const good = { id: 'x1', name: 'X', rpc_url: chain.url, chain_id: 31337 };
      for (const body of [
        { ...good, id: 'Has Caps' },
        { ...good, rpc_url: 'ftp://example.com' },
        { ...good, rpc_url: 'not a url' },
        { ...good, chain_id: 0 },
        { ...good, chain_id: '31337' },
        { id: 'x1', name: 'X', chain_id: 31337 },
      ]) {
        const response = await c.call('POST', '/v1/chains', { body });
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.equal(response.body.error?.code, 'invalid_request');
      }
      const silent = await c.call('POST', '/v1/chains', { body: { ...good, rpc_url: 'http://127.0.0.1:9' } });
      assert.equal(silent.status, 503);
      assert.equal(silent.body.error?.reason, 'rpc_unreachable');
    });

    test('chains/use selects the active chain, kept in the database for the next start', async () => {
      const used = await c.call('POST', '/v1/chains/use', { body: { id: 'devnet' } });
      assert.equal(used.status, 200);
      assert.equal(used.body.data.active, 'devnet');
      // A second engine over the same database (a restart) sees the same choice.
      const restarted = await startContracts(engine, { localRpcUrl: chain.url, database: c.database });
      assert.equal((await restarted.call('GET', '/v1/chains')).body.data.active, 'devnet');
      await restarted.close();
      const unknown = await c.call('POST', '/v1/chains/use', { body: { id: 'nowhere' } });
      assert.equal(unknown.status, 404);
      assert.match(unknown.body.error?.message ?? '', /unknown chain "nowhere"/);
      assert.equal(
        (await c.call('POST', '/v1/chains/use', { body: { id: '31337' } })).body.data.active,
        'local',
        'a numeric chain id finds the built-in first',
      );
    });

    test('a local profile whose node serves another chain id is refused before any simulate or call', async () => {
      const misconfigured = await startContracts(engine, { localRpcUrl: chain.url, chains: { localChainId: 999 }, database: c.database });
      try {
        const response = await misconfigured.call('POST', '/v1/simulate', { body: { chain_id: 'local', to: `0x${'11'.repeat(20)}` } });
        assert.equal(response.status, 409);
        assert.equal(response.body.error?.reason, 'chain_id_mismatch');
      } finally {
        await misconfigured.close();
      }
    });
  });
}
