import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { asDeveloper, headerDeveloperAuth, insertListings, type ListingSeed, otherAddress, ownerAddress } from './discovery-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

const itemKeys = ['display_name', 'id', 'kind', 'operations', 'quality_score', 'score', 'slug', 'summary', 'uptime_bps'];

/** 45 active listings about lemurs with spread stats and prices (many equal scores, to test tie-breaking), plus 3 hidden. */
function lemurCatalogue(): ListingSeed[] {
  const seeds: ListingSeed[] = [];
  for (let index = 0; index < 45; index++)
    seeds.push({
      slug: `lemur-${index}`,
      displayName: `Lemur ${index % 3 === 0 ? 'Lemur' : 'Census'}`,
      summary: index % 2 === 0 ? 'Counts lemurs in Madagascar' : 'Lemur sightings',
      kind: index % 5 === 0 ? 'data' : 'api',
      confidential: index % 4 === 0,
      operations: [{ name: 'count', priceMicros: BigInt(10 ** (index % 4)) }],
      stats: index % 7 === 0 ? undefined : { calls: 100, successes: 100 - (index % 6) * 10, failures: (index % 6) * 10, latencyMs: (index % 3) * 100 },
    });
  for (const status of ['draft', 'paused', 'delisted'] as const)
    seeds.push({ slug: `lemur-${status}`, displayName: 'Lemur Lemur Lemur', summary: 'Lemurs', status });
  return seeds;
}

for (const engine of testEngines()) {
  describe(`discovery routes on ${engine.name}`, () => {
    let m: Marketplace;
    let ids: string[];
    before(async () => {
      m = await startMarketplace(engine, { developers: headerDeveloperAuth });
      ids = await insertListings(m.database.db, lemurCatalogue());
    });
    after(() => m.close());

    async function ok(method: 'GET' | 'POST', url: string, body?: unknown) {
      const response = await m.call(method, url, body === undefined ? {} : { body });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.data;
    }
    async function refused(method: 'GET' | 'POST', url: string, body: unknown, message: RegExp) {
      const response = await m.call(method, url, body === undefined ? {} : { body });
      assert.equal(response.status, 400, `${url} ${JSON.stringify(body)} → ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error, 'invalid_request');
      assert.match(response.body.message, message);
    }

    async function allPages(first: (cursor?: string) => Promise<{ results: Array<{ id: string }>; next_cursor: string | null }>) {
      const seen: Array<{ id: string }> = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await first(cursor);
        seen.push(...page.results);
        if (page.next_cursor === null) return seen;
        cursor = page.next_cursor;
      }
      throw new Error('paging did not end');
    }

    test('catalog: active listings only, in creation order, paged by cursor to the end', async () => {
      const seen = await allPages((cursor) => ok('GET', `/v1/catalog?limit=7${cursor ? `&cursor=${cursor}` : ''}`));
      assert.deepEqual(
        seen.map((item) => item.id),
        ids.slice(0, 45),
      );
      const first = await ok('GET', '/v1/catalog');
      assert.equal(first.results.length, 20);
      assert.deepEqual(
        Object.keys(first.results[0]).sort(),
        itemKeys.filter((key) => key !== 'score'),
      );
      assert.deepEqual(first.results[0].operations, [
        { name: 'count', description: 'The count operation', unit: 'call', price_per_unit: '0.000001', max_units: 1 },
      ]);
      const whole = await ok('GET', '/v1/catalog?limit=100');
      assert.equal(whole.results.length, 45);
      assert.equal(whole.next_cursor, null);
    });

    test('discover: pages of a ranked search cover the ranking once each, in score order', async () => {
      const everything = await ok('POST', '/v1/discover', { query: 'lemur', limit: 100 });
      assert.equal(everything.results.length, 45);
      assert.equal(everything.next_cursor, null);
      assert.deepEqual(Object.keys(everything.results[0]).sort(), itemKeys);
      const paged = await allPages((cursor) => ok('POST', '/v1/discover', { query: 'lemur', limit: 4, ...(cursor ? { cursor } : {}) }));
      assert.deepEqual(paged, everything.results);
      for (let index = 1; index < paged.length; index++) {
        const [a, b] = [everything.results[index - 1], everything.results[index]];
        assert.ok(a.score > b.score || (a.score === b.score && a.id < b.id), `${a.score}/${a.id} before ${b.score}/${b.id}`);
      }
      const browse = await allPages((cursor) => ok('GET', `/v1/discover?limit=6${cursor ? `&cursor=${cursor}` : ''}`));
      assert.equal(new Set(browse.map((item) => item.id)).size, 45);
    });

    test('GET and POST discover agree, and a cursor from one pages the other', async () => {
      const post = await ok('POST', '/v1/discover', { query: 'lemur census', filters: { kind: 'api', max_price_wei: '100', confidential: false }, limit: 3 });
      const get = await ok('GET', '/v1/discover?q=lemur%20census&kind=api&max_price_wei=100&confidential=false&limit=3');
      assert.deepEqual(get, post);
      const viaQuery = await ok('GET', '/v1/discover?query=lemur%20census&kind=api&max_price_wei=100&confidential=false&limit=3');
      assert.deepEqual(viaQuery, post);
      const next = await ok('GET', `/v1/discover?q=lemur%20census&kind=api&max_price_wei=100&confidential=false&limit=3&cursor=${post.next_cursor}`);
      const nextPost = await ok('POST', '/v1/discover', {
        query: 'lemur census',
        filters: { kind: 'api', max_price_wei: '100', confidential: false },
        limit: 3,
        cursor: post.next_cursor,
      });
      assert.deepEqual(next, nextPost);
      const viaQueryString = await ok('POST', `/v1/discover?limit=3&cursor=${post.next_cursor}`, {
        query: 'lemur census',
        filters: { kind: 'api', max_price_wei: '100', confidential: false },
      });
      assert.deepEqual(viaQueryString, nextPost);
      await refused('POST', '/v1/discover?limit=3', { limit: 3 }, /give limit in the body or in the query string, not both/);
    });

    test('filters exclude what they name', async () => {
      const all = (await ok('POST', '/v1/discover', { query: 'lemur', limit: 100 })).results;
      const check = async (filters: Record<string, unknown>, keep: (item: Record<string, unknown>, index: number) => boolean) => {
        const found = (await ok('POST', '/v1/discover', { query: 'lemur', filters, limit: 100 })).results;
        const expected = all.filter((item: Record<string, unknown>) => keep(item, Number((item.slug as string).slice(6))));
        assert.ok(expected.length > 0 && expected.length < all.length, JSON.stringify(filters));
        assert.deepEqual(found.map((item: { id: string }) => item.id).sort(), expected.map((item: { id: string }) => item.id).sort(), JSON.stringify(filters));
      };
      await check({ kind: 'data' }, (_item, index) => index % 5 === 0);
      await check({ confidential: true }, (_item, index) => index % 4 === 0);
      await check({ confidential: false }, (_item, index) => index % 4 !== 0);
      await check({ max_price_wei: '10' }, (_item, index) => 10 ** (index % 4) <= 10);
      assert.equal((await ok('POST', '/v1/discover', { filters: { max_price_wei: '0' } })).results.length, 0);
      await check({ min_quality: '0.8' }, (item) => Number(item.quality_score) >= 0.8);
      await check({ min_quality: '0.5' }, (item) => Number(item.quality_score) >= 0.5);
      await check({ min_uptime_bps: 8000 }, (item) => item.uptime_bps !== null && (item.uptime_bps as number) >= 8000);
      await check({ min_uptime_bps: 0 }, (item) => item.uptime_bps !== null);
      await check(
        { kind: 'api', min_uptime_bps: 9000, confidential: false },
        (item, index) => index % 5 !== 0 && index % 4 !== 0 && (item.uptime_bps as number) >= 9000,
      );
      assert.equal((await ok('POST', '/v1/discover', { query: 'lemur', filters: { kind: 'model' } })).results.length, 0);
    });

    test('a query of stop words only browses; a query matching nothing finds nothing', async () => {
      const browse = await ok('GET', '/v1/discover?q=the%20and%20of&limit=100');
      assert.equal(browse.results.length, 45);
      assert.equal((await ok('GET', '/v1/discover?q=xylophone')).results.length, 0);
      assert.equal((await ok('GET', '/v1/discover?q=%26%7C!%3A*()')).results.length, 20); // operators are not words: browse
    });

    test('every parameter is checked, with a message naming it', async () => {
      await refused('GET', '/v1/catalog?limit=0', undefined, /limit must be an integer from 1 to 100/);
      await refused('GET', '/v1/catalog?limit=101', undefined, /limit/);
      await refused('GET', '/v1/catalog?limit=abc', undefined, /limit/);
      await refused('GET', '/v1/catalog?cursor=nope', undefined, /cursor/);
      await refused('GET', '/v1/catalog?page=2', undefined, /additional properties/);
      await refused('GET', '/v1/discover?kind=robot', undefined, /kind must be one of api, model, agent, data, tool/);
      await refused('GET', '/v1/discover?max_price_wei=0.5', undefined, /max_price_wei must be a whole number/);
      await refused('GET', '/v1/discover?max_price_wei=-1', undefined, /max_price_wei/);
      await refused('GET', '/v1/discover?max_price_wei=01', undefined, /max_price_wei/);
      await refused('GET', '/v1/discover?min_quality=1.5', undefined, /min_quality must be a decimal string from 0 to 1/);
      await refused('GET', '/v1/discover?min_quality=0.1234', undefined, /min_quality/);
      await refused('GET', '/v1/discover?min_uptime_bps=10001', undefined, /min_uptime_bps must be an integer from 0 to 10000/);
      await refused('GET', '/v1/discover?confidential=yes', undefined, /confidential must be true or false/);
      await refused('GET', '/v1/discover?q=a&query=b', undefined, /q or as query, not both/);
      await refused('GET', `/v1/discover?q=${'a'.repeat(257)}`, undefined, /q must be at most 256 characters/);
      await refused('GET', '/v1/discover?max_price=5', undefined, /additional properties/);
      await refused('POST', '/v1/discover', { query: 5 }, /body\/query must be string/);
      await refused('POST', '/v1/discover', { limit: '5' }, /body\/limit must be integer/);
      await refused('POST', '/v1/discover', { limit: 1000 }, /limit must be an integer from 1 to 100/);
      await refused('POST', '/v1/discover', { filters: { max_price_wei: 5 } }, /max_price_wei must be string/);
      await refused('POST', '/v1/discover', { filters: { min_quality: 0.5 } }, /min_quality must be string/);
      await refused('POST', '/v1/discover', { filters: { min_uptime_bps: 9000.5 } }, /min_uptime_bps must be integer/);
      await refused('POST', '/v1/discover', { filters: { confidential: 'true' } }, /confidential must be boolean/);
      await refused('POST', '/v1/discover', { filters: { maxprice: '5' } }, /additional properties/);
      await refused('POST', '/v1/discover', { sort: 'price' }, /additional properties/);
      await refused('POST', '/v1/discover', { cursor: 'x'.repeat(600) }, /cursor/);
    });

    test('a cursor is bound to its query and filters, and to its endpoint', async () => {
      const page = await ok('POST', '/v1/discover', { query: 'lemur', limit: 2 });
      await refused('POST', '/v1/discover', { query: 'census', limit: 2, cursor: page.next_cursor }, /cursor belongs to another query/);
      await refused('POST', '/v1/discover', { query: 'lemur', filters: { kind: 'api' }, cursor: page.next_cursor }, /another query or other filters/);
      await refused('GET', `/v1/catalog?cursor=${page.next_cursor}`, undefined, /cursor is not one this endpoint issued/);
      const catalog = await ok('GET', '/v1/catalog?limit=2');
      await refused('POST', '/v1/discover', { cursor: catalog.next_cursor }, /cursor is not one/);
      // The same words spelled otherwise stem to the same query: the cursor still pages it.
      const same = await ok('POST', '/v1/discover', { query: 'LEMURS!', limit: 2, cursor: page.next_cursor });
      assert.equal(same.results.length, 2);
    });

    test('GET /v1/services/{id}: the listing with its manifest; drafts only to their owner', async () => {
      const view = await ok('GET', `/v1/services/${ids[1]}`);
      assert.equal(view.id, ids[1]);
      assert.equal(view.status, 'active');
      assert.equal(view.manifest.display_name, 'Lemur Census');
      assert.equal(view.uptime_bps, 9000);
      for (const [index, status] of [
        [46, 'paused'],
        [47, 'delisted'],
      ] as const)
        assert.equal((await ok('GET', `/v1/services/${ids[index]}`)).status, status);
      const draft = `/v1/services/${ids[45]}`;
      assert.equal((await m.call('GET', draft)).status, 404);
      assert.equal((await m.call('GET', draft, asDeveloper(otherAddress))).status, 404);
      const own = await m.call('GET', draft, asDeveloper(ownerAddress));
      assert.equal(own.status, 200);
      assert.equal(own.body.data.status, 'draft');
      const unknown = await m.call('GET', '/v1/services/0190b1c2-0000-7000-8000-000000000000');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, 'not_found');
      await refused('GET', '/v1/services/not-a-uuid', undefined, /id must be a service id/);
    });
  });
}
