import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { payoutBindingMessage } from '@platform/kit/payout-binding';
import { testEngines } from '@platform/testkit/databases';
import { assertBoundedLabels, assertDeclared, assertScrapeRefused, metricDeltas, metricValue } from '@platform/testkit/metrics-text';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type Settlement, startSettlement } from './harness.ts';

const contract = [
  'settlement_pays_total',
  'settlement_holds_total',
  'settlement_group_size',
  'settlement_group_commit_seconds',
  'settlement_supply',
  'settlement_vault_reserve',
  'settlement_fully_reserved',
  'settlement_anchor_lag_seconds',
  'settlement_anchor_lag_blocks',
  'settlement_deposits_awaiting_confirmations',
  'settlement_withdrawals_pending',
  'settlement_role',
];

for (const engine of testEngines()) {
  describe(`metrics on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine);
    });
    after(() => s.close());

    const read = async (instance = s) => {
      const scraped = await instance.scrape();
      assert.equal(scraped.status, 200, scraped.text);
      return scraped.text;
    };
    const value = (text: string, name: string, labels: Record<string, string> = {}) => metricValue(text, name, labels) ?? 0;

    test('/metrics needs the metrics bearer: 401 in the envelope without it or with a wrong one', async () => {
      await assertScrapeRefused(s.scrape, [null, 'Bearer wrong', `Bearer ${'test-metrics-token'.toUpperCase()}`]);
    });

    test('every settlement metric is there from the start; this instance is the sequencer', async () => {
      const text = await read();
      assertDeclared(text, contract);
      assert.equal(metricValue(text, 'settlement_role', { role: 'sequencer' }), 1);
      assert.equal(metricValue(text, 'settlement_role', { role: 'standby' }), 0);
      assert.ok(Number.isNaN(metricValue(text, 'settlement_anchor_lag_seconds') as number), 'no chain: nothing to anchor on');
      assert.equal(metricValue(text, 'settlement_deposits_awaiting_confirmations'), 0);
    });

    test('pays count by outcome, each group commit its size and time; supply and reserve follow the faucet', async () => {
      const before = await read();
      const payer = await s.fundedAgent('10');
      const payee = generateAgentKey().did;
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee, amount: '3' } })).status, 200);
      const refused = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee, amount: '30' } });
      assert.equal(refused.body.error?.reason, 'insufficient_funds');
      const after = await read();
      const delta = metricDeltas(before, after);
      assert.equal(delta('settlement_pays_total', { outcome: 'ok' }), 1);
      assert.equal(delta('settlement_pays_total', { outcome: 'insufficient_funds' }), 1);
      // The faucet's deposit and the pay each committed a group; the refused pay wrote nothing.
      assert.equal(delta('settlement_group_size_count'), 2);
      assert.equal(delta('settlement_group_size_sum'), 2);
      assert.equal(delta('settlement_group_commit_seconds_count'), 2);
      assert.equal(delta('settlement_supply'), 10);
      assert.equal(delta('settlement_vault_reserve'), 10);
      assert.equal(metricValue(after, 'settlement_fully_reserved'), 1);
    });

    test('holds count placed, captured, released, expired and refused', async () => {
      const before = await read();
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const hold = async (amount: string, seconds = 60) =>
        s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount, expires_in_seconds: seconds } });
      const captured = (await hold('1')).body.data.hold.id as string;
      const released = (await hold('1')).body.data.hold.id as string;
      await hold('1', 1);
      assert.equal((await hold('100')).status, 409);
      assert.equal((await s.call('POST', `/v1/hold/${captured}/capture`, { token: payee.token, body: {} })).status, 200);
      assert.equal((await s.call('POST', `/v1/hold/${released}/release`, { token: payee.token, body: {} })).status, 200);
      assert.equal((await s.call('POST', `/v1/hold/${released}/release`, { token: payee.token, body: {} })).body.error?.reason, 'hold_closed');
      s.clock.advance(2_000);
      // What the sequencer's tick submits every second: the hold that ran out goes back to its payer.
      await s.sequencer.submit({ kind: 'expire' });
      const delta = metricDeltas(before, await read());
      assert.equal(delta('settlement_holds_total', { outcome: 'placed' }), 3);
      assert.equal(delta('settlement_holds_total', { outcome: 'captured' }), 1);
      assert.equal(delta('settlement_holds_total', { outcome: 'released' }), 1);
      assert.equal(delta('settlement_holds_total', { outcome: 'expired' }), 1);
      assert.equal(delta('settlement_holds_total', { outcome: 'insufficient_funds' }), 1);
      assert.equal(delta('settlement_holds_total', { outcome: 'hold_closed' }), 1);
    });

    test('a withdrawal stays pending until the vault pays it', async () => {
      const before = await read();
      const agent = await s.fundedAgent('5');
      const wallet = privateKeyToAccount(generatePrivateKey());
      const signature = await wallet.signMessage({ message: payoutBindingMessage(agent.did, wallet.address, 125) });
      assert.equal((await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: wallet.address, signature } })).status, 200);
      assert.equal((await s.call('POST', '/v1/withdraw', { token: agent.token, body: { amount: '2' } })).status, 200);
      const after = await read();
      assert.equal(metricDeltas(before, after)('settlement_withdrawals_pending'), 1);
      assert.equal(metricDeltas(before, after)('settlement_supply'), 3, 'the faucet added 5 and the withdrawal burned 2');
    });

    test('label values are bounded: no DID, hold id or raw URL', async () => {
      const payer = await s.fundedAgent('2');
      const held = (await s.call('POST', '/v1/hold', { token: payer.token, body: { to: generateAgentKey().did, amount: '1' } })).body.data.hold.id;
      assert.equal((await s.call('GET', `/v1/hold/${held}`)).status, 200);
      const text = await read();
      assert.ok(value(text, 'http_requests_total', { route: '/v1/hold/:id', status_class: '2xx' }) >= 1);
      assert.ok(value(text, 'db_query_duration_seconds_count', { outcome: 'ok' }) > 0, 'the database is counted too');
      assert.doesNotMatch(text, new RegExp(held));
      assertBoundedLabels(text);
    });

    test('a standby says so: role sequencer 0, standby 1', { skip: engine.name !== 'postgres' && 'PGlite is one process’s database: no standby' }, async () => {
      const standby = await startSettlement(engine, { databaseOptions: s.databaseOptions, clock: s.clock });
      try {
        await standby.waitForRole('standby');
        const text = await read(standby);
        assert.equal(metricValue(text, 'settlement_role', { role: 'sequencer' }), 0);
        assert.equal(metricValue(text, 'settlement_role', { role: 'standby' }), 1);
        assert.equal(metricValue(await read(), 'settlement_role', { role: 'sequencer' }), 1, 'the other instance still leads');
      } finally {
        await standby.close();
      }
    });
  });
}
