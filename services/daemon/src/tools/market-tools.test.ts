import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { gateFor } from './gate-policy.ts';
import { marketTools } from './market-tools.ts';

// The paid call itself runs against the real marketplace and settlement in cli/test/e2e-flows.test.ts.
test('market.search is a read; market.call always asks, naming the most it may pay, whatever the user exempted', async () => {
  const provider = marketTools({ url: 'http://127.0.0.1:9098', token: '' }, generateAgentKey());
  const tools = new Map((await provider.list()).map((tool) => [tool.name, tool]));
  assert.deepEqual([...tools.keys()], ['market.search', 'market.call']);
  const search = tools.get('market.search');
  const call = tools.get('market.call');
  assert.ok(search && call);
  assert.equal(gateFor(search, { query: 'translation' }, new Set()), undefined);
  assert.equal(call.readOnly, false);
  assert.equal(call.rerunSafe, true, 'keyed by the step: a re-run step is charged once');
  const args = { service_id: 's-1', operation: 'translate', max_payment: '0.05' };
  assert.deepEqual(gateFor(call, args, new Set(['market.call'])), {
    reason: 'moves money: pays up to 0.05 for translate on marketplace service s-1',
    always: true,
  });
  assert.deepEqual((call.inputSchema as { required: string[] }).required, ['service_id', 'operation', 'max_payment']);
});
