import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { formatCredit } from '../src/metering/credit.ts';
import { parseRateCard, readRateCardDir } from '../src/rate-cards/rate-card-file.ts';
import { RateCardConflict, RateCardsRepository } from '../src/rate-cards/rate-cards.repository.ts';
import { callerHeaders, type Gateway, models, newActor, rateCardDirs, startGateway, unitsFor } from './harness.ts';

const hello = [{ role: 'user' as const, content: 'hello' }];

for (const engine of testEngines()) {
  describe(`rate cards on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    test('publishing is idempotent and a published version can never be edited', async () => {
      const repository = new RateCardsRepository(gw.database.db, gw.clock);
      assert.deepEqual(await repository.publish(readRateCardDir(rateCardDirs.v1)), [], 'v1 is already there');
      const edited = parseRateCard(
        JSON.stringify({ version: 1, usd_per_credit: '0.01', models: { [models.small]: { input_usd_per_mtok: '0.5', output_usd_per_mtok: '2' } } }),
        'v1.json',
      );
      await assert.rejects(repository.publish([edited]), RateCardConflict);
      const prices = await gw.database.db.selectFrom('rate_card_prices').selectAll().where('version', '=', 1).where('model', '=', models.small).execute();
      assert.equal(prices[0]?.input_pico_usd_per_mtok, 1_000_000_000_000n, 'the stored card is untouched');
    });

    test('a reprice between two calls: new calls use the new version, old rows read as they were written', async () => {
      const actor = newActor();
      const client = gw.client(callerHeaders(actor));
      const first = await client.chat.completions.create({ model: models.small, messages: hello }).withResponse();
      assert.equal(first.response.headers.get('x-platform-rate-table-version'), '1');
      const oldCost = unitsFor(7, 1) + unitsFor(5, 2);
      assert.equal(first.response.headers.get('x-platform-cost-credit'), formatCredit(oldCost));

      // Another instance starting with v2.json in its folder publishes it; this one follows through NOTIFY.
      const added = await new RateCardsRepository(gw.database.db, gw.clock).publish(readRateCardDir(rateCardDirs.v1AndV2));
      assert.deepEqual(added, [2]);
      await eventually(() => gw.book.current().version === 2, 'the running gateway picks up v2');

      const second = await client.chat.completions.create({ model: models.small, messages: hello }).withResponse();
      assert.equal(second.response.headers.get('x-platform-rate-table-version'), '2');
      assert.equal(second.response.headers.get('x-platform-cost-credit'), formatCredit(unitsFor(7, 3) + unitsFor(5, 6)));

      const rows = (await gw.admin('GET', `/ledger?actor=${encodeURIComponent(actor)}`)).json.data as Array<{ rate_table_v: number; cost_credit: string }>;
      assert.deepEqual(
        rows.map((row) => [row.rate_table_v, row.cost_credit]),
        [
          [2, formatCredit(unitsFor(7, 3) + unitsFor(5, 6))],
          [1, formatCredit(oldCost)],
        ],
      );

      // A gateway restarted with both files publishes nothing new and prices with v2.
      const restarted = await startGateway(engine, { besides: gw, env: { GATEWAY_RATE_CARD_DIR: rateCardDirs.v1AndV2 } });
      try {
        assert.equal(restarted.book.current().version, 2);
      } finally {
        await restarted.close();
      }
    });

    test('a call accepted under one version is booked under it, even when a new version lands mid-call', async () => {
      const fresh = await startGateway(engine);
      try {
        const actor = newActor();
        const stream = await fresh.client(callerHeaders(actor)).chat.completions.create({
          model: models.small,
          stream: true,
          messages: [{ role: 'user', content: '[pause-after=1]' }],
        });
        const iterator = stream[Symbol.asyncIterator]();
        await iterator.next();
        await new RateCardsRepository(fresh.database.db, fresh.clock).publish(readRateCardDir(rateCardDirs.v1AndV2));
        await eventually(() => fresh.book.current().version === 2, 'v2 is current');
        fresh.upstream.release();
        for (let next = await iterator.next(); !next.done; next = await iterator.next());
        const [row] = await fresh.ledger(actor);
        assert.deepEqual([row?.rate_table_v, row?.cost_units], [1, unitsFor(7, 1) + unitsFor(5, 2)]);
      } finally {
        await fresh.close();
      }
    });
  });
}
