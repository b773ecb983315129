import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { SettlementClient } from '@platform/client/settlement-client';
import type { StartedService } from '@platform/kit/lifecycle';
import { publishListing, startTranslator } from '@platform/testkit/marketplace-listing';
import { json, oneLine, platform, startInProcess, tempFolder } from './agent-cli-harness.ts';

const ledgerToken = 'agent-cli-market-ledger-token';

describe('platform market search, quote and call against the marketplace and settlement', () => {
  let settlement: StartedService;
  let marketplace: StartedService;
  let provider: Awaited<ReturnType<typeof startTranslator>>;
  let home: ReturnType<typeof tempFolder>;
  let serviceId: string;
  const caller = generateAgentKey();
  let env: Record<string, string>;
  const market = (args: string[], extra: Record<string, string> = {}) => platform(['market', ...args], home.path, { ...env, ...extra });

  before(async () => {
    home = tempFolder('agent-cli-home-');
    settlement = await startInProcess(() => import('../../services/settlement/src/main.ts'), { SETTLEMENT_DEV: 'true', LEDGER_TOKEN: ledgerToken });
    marketplace = await startInProcess(() => import('../../services/marketplace/src/main.ts'), {
      MARKETPLACE_DEV: 'true',
      MARKETPLACE_SETTLEMENT_URL: settlement.url,
      MARKETPLACE_LEDGER_TOKEN: ledgerToken,
    });
    provider = await startTranslator();
    serviceId = await publishListing(marketplace.url, provider.url);
    await new SettlementClient({ baseUrl: settlement.url, transportToken: ledgerToken, key: caller }).faucet('1');
    env = { PLATFORM_MARKETPLACE_URL: marketplace.url, PLATFORM_AGENT_KEY: caller.seedHex, PLATFORM_AGENT_USER_ID: caller.did.split(':')[2] as string };
  });
  after(async () => {
    await marketplace?.stop();
    await settlement?.stop();
    await provider?.close();
    home?.remove();
  });

  test('search finds the listing without any key; the table names its operations and prices', async () => {
    const found = await platform(['market', 'search', 'french', 'translation', '--json'], home.path, { PLATFORM_MARKETPLACE_URL: marketplace.url });
    assert.equal(found.code, 0, found.stderr);
    const { results } = json(found);
    assert.deepEqual(
      results.map((item: { id: string; display_name: string }) => [item.id, item.display_name]),
      [[serviceId, 'French translator']],
    );
    const table = await market(['search', '--kind', 'api']);
    assert.match(table.stdout, /^id +slug +name +kind +score +operations$/m);
    assert.match(table.stdout, new RegExp(`^${serviceId} .* French translator +api +[0-9.]+ +translate 0\\.010000/call$`, 'm'));
    assert.deepEqual(json(await market(['search', 'plumbing', '--json'])).results, []);
  });

  test('quote signs a price for the caller', async () => {
    const quote = json(await market(['quote', serviceId, 'translate', '--units', '1', '--json']));
    assert.deepEqual(
      [quote.service_id, quote.operation, quote.caller, quote.unit_price_settle, quote.max_total_settle],
      [serviceId, 'translate', caller.did, '0.010000', '0.010000'],
    );
    assert.match(quote.signature, /^0x[0-9a-f]{130}$/);
    assert.match(
      (await market(['quote', serviceId, 'translate'])).stdout,
      /^quote +operation +unit price +units +at most +expires\n\S+ +translate +0\.010000 +1 +0\.010000 +\d{4}-/,
    );
  });

  test('call pays within --max-payment and prints the result; above it nothing is paid (exit 1); without it, exit 2', async () => {
    const paid = await market(['call', serviceId, 'translate', '--args', '{"text":"hello"}', '--max-payment', '0.05', '--json']);
    assert.equal(paid.code, 0, paid.stderr);
    const answer = json(paid);
    assert.deepEqual([answer.result, answer.cost], [{ text: 'bonjour hello' }, '0.010000']);
    const table = await market(['call', serviceId, 'translate', '--args', '{"text":"cat"}'], { PLATFORM_MARKET_MAX_PAYMENT: '0.01' });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^invocation +status +cost +seq\n\S+ +succeeded +0\.010000 +\d+\n\n\{\n {2}"text": "bonjour cat"\n\}\n$/);
    const balance = async () =>
      json(await platform(['balance', '--json'], home.path, { ...env, PLATFORM_SETTLEMENT_URL: settlement.url, LEDGER_TOKEN: ledgerToken })).balance;
    assert.equal(await balance(), '0.980000');

    const guarded = await market(['call', serviceId, 'translate', '--max-payment', '0.001']);
    assert.equal(guarded.code, 1);
    assert.match(
      oneLine(guarded),
      /^platform market: marketplace refused: 402 payment_required: the marketplace asks a hold of 0\.010000, more than this client may pay \(0\.001\)$/,
    );
    assert.equal(await balance(), '0.980000', 'nothing was held');

    const unguarded = await market(['call', serviceId, 'translate']);
    assert.equal(unguarded.code, 2);
    assert.match(oneLine(unguarded), /a paid call needs --max-payment <amount> \(or PLATFORM_MARKET_MAX_PAYMENT\)/);
  });

  test('the marketplace refusing is exit 1 with its code; bad arguments are exit 2', async () => {
    const unknown = await market(['call', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'translate', '--max-payment', '1']);
    assert.equal(unknown.code, 1);
    assert.match(oneLine(unknown), /^platform market: marketplace refused: 404 not_found: /);
    const operation = await market(['quote', serviceId, 'summarise']);
    assert.equal(operation.code, 1);
    assert.match(oneLine(operation), /^platform market: marketplace refused: 4\d\d \w+: /);
    const cases: [string[], RegExp][] = [
      [['call', serviceId], /usage: platform market search/],
      [['call', serviceId, 'translate', '--args', 'text=hi', '--max-payment', '1'], /--args must be a JSON object/],
      [['call', serviceId, 'translate', '--max-payment', '0'], /^platform market: --max-payment must be greater than zero$/],
      [['quote', serviceId, 'translate', '--units', '0'], /--units must be an integer from 1/],
      [['browse'], /usage: platform market search/],
      [['call', serviceId, 'translate', '--max-paymnet', '1'], /Unknown option '--max-paymnet'/],
    ];
    for (const [args, expected] of cases) {
      const run = await market(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(oneLine(run), expected);
    }
  });
});
