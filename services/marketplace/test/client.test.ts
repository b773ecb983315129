import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { MarketplaceClient, MarketplaceError } from '@platform/client/marketplace-client';
import { testEngines } from '@platform/testkit/databases';
import { type PaidMarketplace, paidWorldForFile, providerManifest, seedActiveListing, startPaidMarketplace } from './paid-fixtures.ts';

const world = paidWorldForFile();
const engine = testEngines()[0];

describe('the marketplace client (packages/client) against the service over HTTP', () => {
  let market: PaidMarketplace;
  let serviceId: string;
  let baseUrl: string;
  before(async () => {
    market = await startPaidMarketplace(engine as NonNullable<typeof engine>, world.settlement);
    serviceId = await seedActiveListing(market.database.db, providerManifest(world.provider.url));
    await market.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(market.app.server.address() as AddressInfo).port}`;
  });
  after(async () => market.close());

  async function fundedClient(maxPayment: string, amount = '5') {
    const key = generateAgentKey();
    await market.ledger.fund(key.did, amount);
    return { key, client: new MarketplaceClient({ baseUrl, key, maxPayment }) };
  }

  test('invoke pays the 402 terms itself, once, and the receipt comes back', async () => {
    const { key, client } = await fundedClient('0.05');
    const answer = await client.invoke(serviceId, { operation: 'echo', args: { units: 2 }, idempotencyKey: 'client-1' });
    assert.equal(answer.cost, '0.002000');
    assert.deepEqual(answer.result, { echo: { units: 2 } });
    const again = await client.invoke(serviceId, { operation: 'echo', args: { units: 2 }, idempotencyKey: 'client-1' });
    assert.equal(again.invocation_id, answer.invocation_id, 'a retry with the key is the same call');
    assert.equal((await market.ledger.account(key.did)).balance, '4.998000');
    const receipt = await client.receipt(answer.invocation_id);
    assert.equal(receipt.final, true);
    assert.equal(receipt.message.amount, '2000');
  });

  test('terms above maxPayment are refused by the client; nothing is held', async () => {
    const { key, client } = await fundedClient('0.005');
    await assert.rejects(
      client.invoke(serviceId, { operation: 'echo' }),
      (error: unknown) => error instanceof MarketplaceError && error.status === 402 && /more than this client may pay/.test(error.message),
    );
    assert.deepEqual(await market.ledger.account(key.did), { ...(await market.ledger.account(key.did)), balance: '5.000000', held: '0.000000' });
  });

  test('a channel: the client signs each voucher, asks for the signed statement, and closing captures what was spent', async () => {
    const { key, client } = await fundedClient('1');
    const channel = await client.openChannel(serviceId, '0.5');
    for (let i = 1; i <= 5; i++) await channel.call('echo', { units: i });
    assert.equal(channel.spent, '0.015000');
    const statement = await channel.cosign();
    assert.equal(statement.spent, '0.015000');
    assert.equal(statement.sequence, '5');
    const closed = await channel.close();
    assert.equal(closed.spent, '0.015000');
    assert.equal((await market.ledger.account(key.did)).balance, '4.985000');
  });
});
