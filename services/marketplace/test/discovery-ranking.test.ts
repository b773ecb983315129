import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import { priceTerm, qualitySql, uptimeBpsSql, weights } from '../src/discovery/ranking.ts';
import { formatQuality, measure } from '../src/listings/quality.ts';
import { headerDeveloperAuth, insertListings, type ListingSeed } from './discovery-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

/*
 * The ranking orders what its formula (src/discovery/ranking.ts) claims: each test holds every term but one equal
 * and checks the order that one term alone decides. Each test seeds its own catalogue behind a distinct word, so
 * the tests share a marketplace without seeing each other's listings.
 */

const good = { calls: 1000, successes: 990, failures: 10, latencyMs: 100 };

for (const engine of testEngines()) {
  describe(`discovery ranking on ${engine.name}`, () => {
    let m: Marketplace;
    before(async () => {
      m = await startMarketplace(engine, { developers: headerDeveloperAuth });
    });
    after(() => m.close());

    const seed = (seeds: ListingSeed[]) => insertListings(m.database.db, seeds);
    async function discover(body: Record<string, unknown>) {
      const response = await m.call('POST', '/v1/discover', { body });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.data as { results: Array<Record<string, unknown>>; next_cursor: string | null };
    }
    const slugs = (page: { results: Array<Record<string, unknown>> }) => page.results.map((result) => result.slug);

    test('more relevant text ranks higher at equal stats and price', async () => {
      await seed([
        { slug: 'rel-weak', displayName: 'Generic Helper', summary: 'Does many things, among them zebrafish', stats: good },
        { slug: 'rel-strong', displayName: 'Zebrafish Genome', summary: 'Zebrafish genome annotation for zebrafish labs', tags: ['zebrafish'], stats: good },
        { slug: 'rel-none', displayName: 'Weather', summary: 'Forecasts', stats: good },
      ]);
      const page = await discover({ query: 'zebrafish' });
      assert.deepEqual(slugs(page), ['rel-strong', 'rel-weak']);
      assert.ok(Number(page.results[0]?.score) > Number(page.results[1]?.score));
    });

    test('most of the words must match; any one of them only when nothing holds most', async () => {
      await seed([
        { slug: 'w-both', displayName: 'Walrus Tusk', summary: 'Walrus tusk ivory registry', stats: good },
        { slug: 'w-walrus', displayName: 'Walrus Census', summary: 'Counts walrus', stats: { ...good, successes: 1000, failures: 0 } },
        { slug: 'w-tusk', displayName: 'Tusk Scanner', summary: 'Scans tusk', stats: good },
      ]);
      assert.deepEqual(slugs(await discover({ query: 'walrus tusk' })), ['w-both']);
      // 2 of 3 words: the unknown third word does not matter.
      assert.deepEqual(slugs(await discover({ query: 'walrus tusk qqqzzz' })), ['w-both']);
      // Nothing holds both: any of them, best text first (equal text: the better stats).
      assert.deepEqual(slugs(await discover({ query: 'walrus qqqzzz' })), ['w-walrus', 'w-both']);
    });

    test("a listing holding more of a question's words ranks higher; filler words do not empty the result", async () => {
      await seed([
        { slug: 'q-one', displayName: 'Kumquat Juicer', summary: 'Presses kumquat', stats: good },
        { slug: 'q-two', displayName: 'Kumquat Peeler', summary: 'Peels and presses kumquat quickly', stats: good },
      ]);
      const page = await discover({ query: 'I need something that peels a kumquat' });
      assert.deepEqual(slugs(page), ['q-two', 'q-one']);
    });

    test('better measured success ranks higher at equal text and price; a never-called listing sits at the 0.5 prior', async () => {
      await seed([
        { slug: 'ok-flaky', displayName: 'Okapi Tracker', summary: 'Tracks okapi', stats: { calls: 1000, successes: 300, failures: 700, latencyMs: 100 } },
        { slug: 'ok-solid', displayName: 'Okapi Tracker', summary: 'Tracks okapi', stats: { calls: 1000, successes: 999, failures: 1, latencyMs: 100 } },
        { slug: 'ok-new', displayName: 'Okapi Tracker', summary: 'Tracks okapi' },
      ]);
      const page = await discover({ query: 'okapi' });
      assert.deepEqual(slugs(page), ['ok-solid', 'ok-new', 'ok-flaky']);
    });

    test('lower measured latency ranks higher at equal success', async () => {
      await seed([
        { slug: 'lat-slow', displayName: 'Quokka Counter', summary: 'Counts quokka', stats: { ...good, latencyMs: 3000 } },
        { slug: 'lat-fast', displayName: 'Quokka Counter', summary: 'Counts quokka', stats: { ...good, latencyMs: 50 } },
      ]);
      assert.deepEqual(slugs(await discover({ query: 'quokka' })), ['lat-fast', 'lat-slow']);
    });

    test('cheaper ranks higher at equal everything else, judged by the cheapest operation', async () => {
      await seed([
        { slug: 'p-dear', displayName: 'Narwhal Index', summary: 'Narwhal data', stats: good, operations: [{ name: 'run', priceMicros: 50_000n }] },
        {
          slug: 'p-cheap',
          displayName: 'Narwhal Index',
          summary: 'Narwhal data',
          stats: good,
          operations: [
            { name: 'run', priceMicros: 900_000n },
            { name: 'lite', priceMicros: 10n },
          ],
        },
        { slug: 'p-mid', displayName: 'Narwhal Index', summary: 'Narwhal data', stats: good, operations: [{ name: 'run', priceMicros: 2_000n }] },
      ]);
      assert.deepEqual(slugs(await discover({ query: 'narwhal' })), ['p-cheap', 'p-mid', 'p-dear']);
    });

    test('browsing without a query ranks by stats and price alone, and the score stays in [0, 1]', async () => {
      const page = await discover({ filters: { kind: 'agent' } });
      assert.equal(page.results.length, 0);
      await seed([
        { slug: 'b-bad', displayName: 'A', summary: 'a', kind: 'agent', stats: { calls: 100, successes: 10, failures: 90 } },
        { slug: 'b-good', displayName: 'B', summary: 'b', kind: 'agent', stats: good },
      ]);
      const browse = await discover({ filters: { kind: 'agent' } });
      assert.deepEqual(slugs(browse), ['b-good', 'b-bad']);
      for (const result of browse.results) assert.match(result.score as string, /^(0\.\d{6}|1\.000000)$/);
    });

    test('the score is the documented blend', async () => {
      const [id] = await seed([
        { slug: 'f-only', displayName: 'Pangolin Scales', summary: 'Pangolin', stats: good, operations: [{ name: 'run', priceMicros: 1_000n }] },
      ]);
      const page = await discover({ query: 'pangolin' });
      const q = measure({ calls: 1000n, successes: 990n, failures: 10n, latency_ms_total: 100_000n });
      const reliability = (990 + 5) / (1000 + 10);
      const expected = weights.text * 1 + weights.quality * q.quality + weights.reliability * reliability + weights.price * priceTerm(1000);
      assert.equal(page.results[0]?.id, id);
      assert.equal(page.results[0]?.score, expected.toFixed(6));
    });

    test('SQL quality and uptime equal measure() bit for bit', async () => {
      const cases = [
        { calls: 0, successes: 0, failures: 0, latencyMs: 0 },
        { calls: 3, successes: 2, failures: 1, latencyMs: 333 },
        { calls: 7919, successes: 7001, failures: 918, latencyMs: 1234 },
        { calls: 100_000, successes: 99_999, failures: 1, latencyMs: 17 },
      ];
      const ids = await seed(cases.map((stats, index) => ({ slug: `eq-${index}`, displayName: 'Eq', summary: 'eq', status: 'draft' as const, stats })));
      const { rows } = await sql<{ id: string; quality: number; uptime: number | null }>`
        select l.id, ${qualitySql} as quality, ${uptimeBpsSql}::int as uptime from listings l left join listing_stats s on s.listing_id = l.id
        where l.id in (${sql.join(ids)})`.execute(m.database.db);
      for (const row of rows) {
        const stats = await m.database.db.selectFrom('listing_stats').selectAll().where('listing_id', '=', row.id).executeTakeFirst();
        const measured = measure(stats);
        assert.equal(Number(row.quality), measured.quality);
        assert.equal(row.uptime, measured.uptimeBps);
        assert.equal(formatQuality(Number(row.quality)), formatQuality(measured.quality));
      }
    });
  });
}
