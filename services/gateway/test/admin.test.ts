import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { formatCredit } from '../src/metering/credit.ts';
import { adminToken, callerHeaders, type Gateway, gatewayToken, models, newActor, startGateway, today, unitsFor } from './harness.ts';

const ask = (content = 'hello') => ({ model: models.small, messages: [{ role: 'user' as const, content }] });
const defaultCost = unitsFor(7, 1) + unitsFor(5, 2);

for (const engine of testEngines()) {
  describe(`operator routes on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    test('operator routes take GATEWAY_ADMIN_TOKEN only, and are off while it is empty', async () => {
      const actor = newActor();
      for (const bearer of [null, gatewayToken, `${adminToken}x`]) {
        const response = await gw.admin('GET', '/spend', undefined, bearer);
        assert.deepEqual([response.status, response.json.error.code], [401, 'unauthorized'], String(bearer));
      }
      assert.equal((await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '1' }, gatewayToken)).status, 401);
      assert.equal((await gw.admin('GET', '/spend')).status, 200);
      const off = await startGateway(engine, { besides: gw, env: { GATEWAY_ADMIN_TOKEN: '' } });
      try {
        const response = await off.admin('GET', '/spend', undefined, 'anything');
        assert.deepEqual([response.status, response.json.error.code], [403, 'admin_disabled']);
        assert.match(response.json.error.message, /GATEWAY_ADMIN_TOKEN/);
      } finally {
        await off.close();
      }
    });

    test('caps: read the default, override, remove; bad values are a 400 naming the field', async () => {
      const actor = newActor();
      assert.deepEqual((await gw.admin('GET', `/actors/${actor}/cap`)).json, { actor, limit_credit: '10.000000000000', source: 'default' });
      const set = await gw.admin('PUT', `/actors/${encodeURIComponent(actor)}/cap`, { limit_credit: '2.5' });
      assert.deepEqual(set.json, { actor, limit_credit: '2.500000000000', source: 'override' });
      for (const limit of ['-1', '1e3', '0.0000000000001', '1000001', 5]) {
        const response = await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: limit });
        assert.equal(response.status, 400, String(limit));
        assert.match(`${response.json.error.param} ${response.json.error.message}`, /limit_credit/);
      }
      assert.equal((await gw.admin('PUT', '/actors/not-a-did/cap', { limit_credit: '1' })).json.error.code, 'invalid_actor');
      assert.deepEqual((await gw.admin('DELETE', `/actors/${actor}/cap`)).json.source, 'default');
    });

    test('spend per actor and day, with the cap that applies', async () => {
      const actor = newActor();
      await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '3' });
      const client = gw.client(callerHeaders(actor));
      await client.chat.completions.create(ask());
      await client.chat.completions.create(ask());
      const response = await gw.admin('GET', `/spend?actor=${encodeURIComponent(actor)}&from=${today}&to=${today}`);
      assert.deepEqual(response.json.data, [
        { actor, day: today, spent_credit: formatCredit(2n * defaultCost), reserved_credit: '0.000000000000', limit_credit: '3.000000000000', calls: 2 },
      ]);
      assert.deepEqual((await gw.admin('GET', `/spend?actor=${encodeURIComponent(actor)}&from=2026-03-02`)).json.data, []);
      assert.equal((await gw.admin('GET', '/spend?from=2026-02-30')).json.error.code, 'invalid_day');
    });

    test('rollups by intent, by goal and by kind route add up the debited cost', async () => {
      const actor = newActor();
      const call = (intent: string, goal: string, route: string) =>
        gw
          .client(callerHeaders(actor, 'executor', { 'x-platform-intent-id': intent, 'x-platform-goal-id': goal, 'x-platform-kind-route': route }))
          .chat.completions.create({ ...ask(), model: models.coder });
      await call('intent-a', 'goal-1', 'reason');
      await call('intent-a', 'goal-1', 'code');
      await call('intent-b', 'goal-1', 'code');
      await gw.client(callerHeaders(actor, 'executor')).chat.completions.create({ ...ask(), model: models.coder });
      const each = unitsFor(7, 1) + unitsFor(5, 1);
      const rollup = async (by: string) => (await gw.admin('GET', `/rollups?by=${by}&actor=${encodeURIComponent(actor)}`)).json;
      assert.deepEqual((await rollup('intent')).data, [
        { key: 'intent-a', calls: 2, input_tokens: 14, output_tokens: 10, cost_credit: formatCredit(2n * each) },
        { key: 'intent-b', calls: 1, input_tokens: 7, output_tokens: 5, cost_credit: formatCredit(each) },
      ]);
      assert.deepEqual((await rollup('goal')).data, [{ key: 'goal-1', calls: 3, input_tokens: 21, output_tokens: 15, cost_credit: formatCredit(3n * each) }]);
      assert.deepEqual(
        (await rollup('kind_route')).data.map((row: { key: string; calls: number }) => [row.key, row.calls]),
        [
          ['code', 2],
          ['reason', 1],
        ],
      );
      assert.deepEqual((await rollup('slot')).data, [{ key: 'executor', calls: 4, input_tokens: 28, output_tokens: 20, cost_credit: formatCredit(4n * each) }]);
      assert.equal((await gw.admin('GET', '/rollups?by=actor')).status, 400);
    });

    test('the ledger pages newest first', async () => {
      const actor = newActor();
      const client = gw.client(callerHeaders(actor));
      for (let i = 0; i < 3; i++) await client.chat.completions.create(ask());
      const first = (await gw.admin('GET', `/ledger?actor=${encodeURIComponent(actor)}&limit=2`)).json;
      assert.equal(first.data.length, 2);
      assert.ok(first.next_before);
      const second = (await gw.admin('GET', `/ledger?actor=${encodeURIComponent(actor)}&limit=2&before=${first.next_before}`)).json;
      assert.equal(second.data.length, 1);
      assert.equal(second.next_before, null);
      const ids = [...first.data, ...second.data].map((row: { id: string }) => row.id);
      assert.deepEqual(ids, [...ids].sort().reverse());
      assert.deepEqual(Object.keys(first.data[0]).sort(), [
        'actor',
        'basis',
        'cost_credit',
        'created_at',
        'day',
        'goal_id',
        'id',
        'input_tokens',
        'intent_id',
        'kind',
        'kind_route',
        'model',
        'output_tokens',
        'rate_table_v',
        'slot',
        'streamed',
      ]);
    });
  });
}
