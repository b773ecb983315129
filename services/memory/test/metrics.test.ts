import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { testEngines } from '@platform/testkit/databases';
import { assertBoundedLabels, metricFamilies, metricValue } from '@platform/testkit/metrics-text';
import { memoryMetrics } from '../src/metrics.ts';
import { type MemoryServer, startOnFreshDatabase } from './harness.ts';

const metricsToken = 'memory-metrics-token-for-this-test';

for (const engine of testEngines()) {
  describe(`memory metrics on ${engine.name}`, () => {
    let server: MemoryServer;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ server, dispose } = await startOnFreshDatabase(engine, { metrics: createServiceMetrics('memory'), env: { PLATFORM_METRICS_TOKEN: metricsToken } }));
    });
    after(() => dispose());

    const scrape = (bearer: string | null = metricsToken) => server.http('GET', '/metrics', { bearer });

    it('GET /metrics is 401 in the envelope without the metrics bearer, and with the memory bearer', async () => {
      for (const bearer of [null, 'wrong', undefined]) {
        const answer = bearer === undefined ? await server.http('GET', '/metrics') : await scrape(bearer);
        assert.equal(answer.status, 401, `bearer ${bearer}`);
        assert.equal(answer.json.error.code, 'unauthorized');
      }
    });

    it('recall and search latency, and the memories held: remembered counted, superseded and forgotten not', async () => {
      const before = (await scrape()).text;
      for (const [name, type] of [
        ['memory_recall_duration_seconds', 'histogram'],
        ['memory_search_duration_seconds', 'histogram'],
        ['memory_memories', 'gauge'],
      ] as const)
        assert.equal(metricFamilies(before).get(name), type, name);
      assert.equal(metricValue(before, 'memory_memories'), 0);
      const [kept, forgotten] = await server.remember([
        'The user alice@example.com prefers tea to coffee.',
        'The user lives at https://example.com/home in Lisbon.',
        { content: 'The user drives a blue car.', key: 'car' },
      ]);
      await server.remember([{ content: 'The user drives a red car.', key: 'car' }]);
      assert.equal((await server.call('forget', { id: forgotten })).status, 200);
      await server.ok('recall', { query: 'what does the user drink?' });
      await server.ok('recall', { query: 'where does the user live?' });
      await server.ok('search', { query: 'car' });
      assert.ok(kept);

      const answer = await scrape();
      assert.equal(answer.status, 200);
      const text = answer.text;
      const count = (t: string, name: string) => metricValue(t, name) ?? 0;
      assert.equal(count(text, 'memory_recall_duration_seconds_count') - count(before, 'memory_recall_duration_seconds_count'), 2);
      assert.equal(count(text, 'memory_search_duration_seconds_count') - count(before, 'memory_search_duration_seconds_count'), 1);
      assert.ok(count(text, 'memory_recall_duration_seconds_sum') > 0);
      // Four remembered, one superseded by the red car, one forgotten.
      assert.equal(metricValue(text, 'memory_memories'), 2);
      assert.ok((metricValue(text, 'http_requests_total', { route: '/v1/recall', status_class: '2xx' }) ?? 0) >= 2);
      assert.ok((metricValue(text, 'db_query_duration_seconds_count', { outcome: 'ok' }) ?? 0) > 0);
      assertBoundedLabels(text);
      assert.doesNotMatch(text, /alice|example\.com|Lisbon/);
    });

    it('memoryMetrics alone registers the names the server serves (deploy/observability checks them this way)', async () => {
      const alone = createServiceMetrics('memory');
      memoryMetrics(alone);
      const served = metricFamilies((await scrape()).text);
      for (const name of metricFamilies(await alone.render()).keys()) assert.ok(served.has(name), name);
    });
  });
}
