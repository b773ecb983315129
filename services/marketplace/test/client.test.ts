import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { MarketplaceClient, MarketplaceError } from '@platform/client/marketplace-client';
import { fetchTransport } from '@platform/client/service-session';
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

  test('once it knows an operation’s terms the client pays in one request, and pays the new terms when the price changed', async () => {
    const key = generateAgentKey();
    await market.ledger.fund(key.did, '5');
    const sent: string[] = [];
    const send = fetchTransport(fetch);
    const client = new MarketplaceClient({
      baseUrl,
      key,
      maxPayment: '0.05',
      transport: (method, url, init) => {
        sent.push(`${method} ${url.pathname}${init.headers['x-ledger-payment'] ? ' paid' : ''}`);
        return send(method, url, init);
      },
    });
    const pricedId = await seedActiveListing(market.database.db, providerManifest(world.provider.url));
    const invokes = () => sent.filter((line) => line.startsWith(`POST /v1/invoke/${pricedId}`));
    assert.equal((await client.invoke(pricedId, { operation: 'echo', args: { text: 'first' } })).cost, '0.001000');
    assert.deepEqual(invokes(), [`POST /v1/invoke/${pricedId}`, `POST /v1/invoke/${pricedId} paid`], 'the first call asks for the terms');
    const second = await client.invoke(pricedId, { operation: 'echo', args: { text: 'second' } });
    assert.deepEqual(second.result, { echo: { text: 'second' } });
    assert.equal(invokes().length, 3, 'the second call is paid in one request, its ref bound to its own args');
    const listing = await market.database.db.selectFrom('listings').select('manifest').where('id', '=', pricedId).executeTakeFirstOrThrow();
    const manifest = listing.manifest as { operations: Array<{ name: string; pricing: { price_per_unit: string } }> };
    for (const operation of manifest.operations) if (operation.name === 'echo') operation.pricing.price_per_unit = '0.002000';
    await market.database.db
      .updateTable('listings')
      .set({ manifest: JSON.stringify(manifest) as never })
      .where('id', '=', pricedId)
      .execute();
    market.deps.payments.desk.listings.forget(pricedId);
    assert.equal((await client.invoke(pricedId, { operation: 'echo', args: { text: 'third' } })).cost, '0.002000');
    assert.deepEqual(invokes().slice(3), [`POST /v1/invoke/${pricedId} paid`, `POST /v1/invoke/${pricedId} paid`], 'refused at the old cap, paid at the new');
    assert.equal((await market.ledger.account(key.did)).balance, '4.996000');
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
