import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { asDeveloper, headerDeveloperAuth, type InvocationSeed, insertInvocations, insertListings, otherAddress, ownerAddress } from './discovery-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

const day = 86_400_000;

for (const engine of testEngines()) {
  describe(`service analytics on ${engine.name}`, () => {
    let m: Marketplace;
    let id: string;
    let quiet: string;
    before(async () => {
      m = await startMarketplace(engine, { developers: headerDeveloperAuth });
      const ids = await insertListings(m.database.db, [
        { slug: 'an-busy', displayName: 'Busy', summary: 'busy', stats: { calls: 100, successes: 90, failures: 10, latencyMs: 200 } },
        { slug: 'an-quiet', displayName: 'Quiet', summary: 'quiet' },
      ]);
      [id, quiet] = ids as [string, string];
      const now = m.clock.now().getTime();
      const seeds: InvocationSeed[] = [];
      // Last day: latencies 1..100 ms, 90 succeeded (0.001 each), 10 failed; two pending.
      for (let index = 1; index <= 100; index++)
        seeds.push({
          listingId: id,
          status: index % 10 === 0 ? 'failed' : 'succeeded',
          costMicros: 1_000n,
          latencyMs: index,
          startedAt: new Date(now - index * 60_000),
        });
      seeds.push({ listingId: id, status: 'pending', startedAt: new Date(now - 1000) }, { listingId: id, status: 'pending', startedAt: new Date(now - 2000) });
      // Ten days ago: 5 slow successes at 0.5 each.
      for (let index = 0; index < 5; index++)
        seeds.push({ listingId: id, operation: 'bulk', status: 'succeeded', costMicros: 500_000n, latencyMs: 5_000, startedAt: new Date(now - 10 * day) });
      await insertInvocations(m.database.db, seeds);
    });
    after(() => m.close());

    const analytics = (query = '', as = ownerAddress, of = id) => m.call('GET', `/v1/services/${of}/analytics${query}`, asDeveloper(as));

    test('all time: counts by status, revenue, success rate, latency percentiles and the measured standing', async () => {
      const response = await analytics();
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.data, {
        service_id: id,
        window: { since: null, until: null },
        invocations: { total: 107, succeeded: 95, failed: 10, pending: 2 },
        revenue: '2.590000',
        success_rate: '0.9047',
        latency_ms: { p50: 53, p95: 99.8, p99: 5000, mean: 286.2 },
        by_operation: [
          { operation: 'run', invocations: 102, succeeded: 90, failed: 10, revenue: '0.090000' },
          { operation: 'bulk', invocations: 5, succeeded: 5, failed: 0, revenue: '2.500000' },
        ],
        quality_score: '0.785',
        uptime_bps: 9000,
      });
    });

    test('a window counts only the invocations that started in it', async () => {
      const lastDay = await analytics('?window=24h');
      assert.equal(lastDay.status, 200);
      const data = lastDay.body.data;
      assert.equal(data.window.since, new Date(m.clock.now().getTime() - day).toISOString());
      assert.deepEqual(data.invocations, { total: 102, succeeded: 90, failed: 10, pending: 2 });
      assert.equal(data.revenue, '0.090000');
      assert.equal(data.success_rate, '0.9000');
      // percentile_cont over 1..100: p50 = 50.5, p95 = 95.05, p99 = 99.01 (one decimal shown).
      assert.deepEqual(data.latency_ms, { p50: 50.5, p95: 95.1, p99: 99, mean: 50.5 });
      const old = await analytics(
        `?since=${new Date(m.clock.now().getTime() - 11 * day).toISOString()}&until=${new Date(m.clock.now().getTime() - 9 * day).toISOString()}`,
      );
      assert.deepEqual(old.body.data.invocations, { total: 5, succeeded: 5, failed: 0, pending: 0 });
      assert.equal(old.body.data.revenue, '2.500000');
      assert.deepEqual(old.body.data.by_operation, [{ operation: 'bulk', invocations: 5, succeeded: 5, failed: 0, revenue: '2.500000' }]);
    });

    test('a listing never called: zeros and nulls, not errors', async () => {
      const response = await analytics('', ownerAddress, quiet);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.data.invocations, { total: 0, succeeded: 0, failed: 0, pending: 0 });
      assert.equal(response.body.data.revenue, '0.000000');
      assert.equal(response.body.data.success_rate, null);
      assert.deepEqual(response.body.data.latency_ms, { p50: null, p95: null, p99: null, mean: null });
      assert.deepEqual(response.body.data.by_operation, []);
      assert.equal(response.body.data.quality_score, '0.500');
      assert.equal(response.body.data.uptime_bps, null);
    });

    test('owner only: 401 without credentials, 403 for another developer, 404 for an unknown service', async () => {
      const anonymous = await m.call('GET', `/v1/services/${id}/analytics`);
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error, 'unauthorized');
      const other = await analytics('', otherAddress);
      assert.equal(other.status, 403);
      assert.equal(other.body.error, 'forbidden');
      const unknown = await analytics('', ownerAddress, '0190b1c2-0000-7000-8000-000000000000');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, 'not_found');
      const checksummed = await analytics('', ownerAddress.toUpperCase().replace('0X', '0x'));
      assert.equal(checksummed.status, 200);
    });

    test('window parameters are checked', async () => {
      for (const [query, message] of [
        ['?window=3w', /window must be a duration/],
        ['?window=400d', /at most 366d/],
        ['?window=1d&since=2026-01-01T00:00:00Z', /window, or since\/until, not both/],
        ['?since=yesterday', /since must be an ISO 8601 time/],
        ['?since=2026-03-01', /since must be an ISO 8601 time/],
        ['?since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z', /since must be before until/],
        ['?from=2026-03-01T00:00:00Z', /additional properties/],
      ] as const) {
        const response = await analytics(query);
        assert.equal(response.status, 400, query);
        assert.match(response.body.message, message, query);
      }
      const badId = await analytics('', ownerAddress, 'nope');
      assert.equal(badId.status, 400);
    });
  });
}
