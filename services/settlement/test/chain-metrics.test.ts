import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { assertBoundedLabels, metricValue } from '@platform/testkit/metrics-text';
import type { TestChain } from '@platform/testkit/test-chain';
import { type Clients, depositOnChain, mint, newWallet, untilQuiet, useTestChain } from './chain-helpers.ts';
import { type Settlement, startSettlement } from './harness.ts';

let chain: TestChain;
let clients: Clients;
const { dataDir } = useTestChain('settlement-chain-metrics-', (node, viem) => {
  chain = node;
  clients = viem;
});

for (const engine of testEngines()) {
  describe(`metrics of the ledger on a live chain, ${engine.name}`, () => {
    let s: Settlement;
    afterEach(async () => s?.close());

    const gauges = async () => {
      const scraped = await s.scrape();
      assert.equal(scraped.status, 200, scraped.text);
      assertBoundedLabels(scraped.text);
      const read = (name: string) => metricValue(scraped.text, `settlement_${name}`) as number;
      return {
        awaiting: read('deposits_awaiting_confirmations'),
        supply: read('supply'),
        reserve: read('vault_reserve'),
        fullyReserved: read('fully_reserved'),
        lagSeconds: read('anchor_lag_seconds'),
        lagBlocks: read('anchor_lag_blocks'),
      };
    };

    test('a deposit awaits its confirmations, then counts in supply and reserve; a batch lags in seconds and blocks until anchored', async () => {
      s = await startSettlement(engine, { chain: { rpcUrl: chain.url, dataDir: dataDir(), confirmations: 3 } });
      const live = s.live as NonNullable<Settlement['live']>;
      const alice = await s.agent();
      const wallet = await newWallet(chain, clients);
      const instructions = (await s.call('GET', '/v1/deposit', { token: alice.token })).body.data;
      await mint(clients, instructions.token_address, wallet.account.address, 100_000_000n);
      await depositOnChain(clients, wallet, instructions, 100_000_000n);
      await live.runPass();
      assert.deepEqual((({ awaiting, supply }) => ({ awaiting, supply }))(await gauges()), { awaiting: 1, supply: 0 }, 'one confirmation of three');
      await chain.mine(2);
      await live.runPass();
      // The next pass checks the reserve at the block the deposit was taken in through.
      await live.runPass();
      const credited = await gauges();
      assert.deepEqual([credited.awaiting, credited.supply, credited.reserve, credited.fullyReserved], [0, 100, 100, 1]);
      assert.equal(credited.lagSeconds, 0, 'nothing to anchor yet');

      assert.equal((await s.call('POST', '/v1/settle', { token: alice.token })).status, 200);
      s.clock.advance(30_000);
      await live.runPass();
      // The anchor is mined, one more block on it: still short of its three confirmations.
      await chain.mine(1);
      await live.runPass();
      const waiting = await gauges();
      assert.ok(waiting.lagSeconds >= 30, `lag ${waiting.lagSeconds} s`);
      assert.ok(waiting.lagBlocks >= 1, `lag ${waiting.lagBlocks} blocks`);

      await chain.mine(3);
      await untilQuiet(s);
      const anchored = await gauges();
      assert.deepEqual([anchored.lagSeconds, anchored.lagBlocks], [0, 0]);
    });
  });
}
