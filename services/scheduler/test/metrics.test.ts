import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { assertBoundedLabels, assertDeclared, assertScrapeRefused, metricDeltas, metricValue } from '@platform/testkit/metrics-text';
import { type Scheduler, startScheduler } from './harness.ts';

const contract = ['scheduler_alarms_due', 'scheduler_fire_lateness_seconds', 'scheduler_fires_total', 'scheduler_wake_failures_total'];

for (const engine of testEngines()) {
  describe(`metrics on ${engine.name}`, () => {
    let s: Scheduler;
    let agent: Awaited<ReturnType<Scheduler['agent']>>;
    before(async () => {
      s = await startScheduler(engine);
      agent = await s.agent();
    });
    after(() => s.close());

    const create = async (body: Record<string, unknown>) => {
      const token = (await s.agent(agent.key)).token;
      const created = await s.call('POST', '/v1/alarms', { token, body });
      assert.equal(created.status, 200);
      return created.body.data.id as string;
    };
    const read = async () => {
      const scraped = await s.scrape();
      assert.equal(scraped.status, 200);
      return scraped.text;
    };
    const value = (text: string, name: string, labels: Record<string, string> = {}) => metricValue(text, name, labels) ?? 0;

    test('/metrics needs the metrics bearer: 401 in the envelope without it, with a wrong one or with the transport bearer', async () => {
      await assertScrapeRefused(s.scrape, [null, 'Bearer wrong', 'Bearer test-transport-token']);
    });

    test('every scheduler metric is there from the start, with its help and type', async () => {
      const text = await read();
      assertDeclared(text, contract);
      assert.equal(metricValue(text, 'scheduler_fires_total', { outcome: 'delivered' }), 0, 'outcome series exist at 0');
    });

    test('an alarm falling due shows in alarms_due until fired, then as a delivered fire with its lateness', async () => {
      s.receiver.setBehaviour(() => ({ status: 200 }));
      const before = await read();
      const id = await create({ kind: 'once', wake_message: 'due soon', delay_seconds: 30 });
      assert.equal(value(await read(), 'scheduler_alarms_due'), 0, 'not due yet');
      // Fired 4 s after it fell due: lateness between 2.5 and 5 s.
      s.clock.advance(34_000);
      assert.equal(value(await read(), 'scheduler_alarms_due'), 1);
      await s.makeDispatcher().runOnce();
      assert.equal(s.receiver.received.filter((wake) => wake.body.alarm_id === id).length, 1);
      const after = await read();
      assert.equal(value(after, 'scheduler_alarms_due'), 0);
      const delta = metricDeltas(before, after);
      assert.equal(delta('scheduler_fires_total', { outcome: 'delivered' }), 1);
      assert.equal(delta('scheduler_fire_lateness_seconds_count'), 1);
      assert.equal(delta('scheduler_fire_lateness_seconds_bucket', { le: '2.5' }), 0);
      assert.equal(delta('scheduler_fire_lateness_seconds_bucket', { le: '5' }), 1);
      assert.equal(delta('scheduler_wake_failures_total'), 0);
    });

    test('a refused wake counts its reason, then a retry, then the alarm giving up', async () => {
      s.receiver.setBehaviour(() => ({ status: 503 }));
      const before = await read();
      await create({ kind: 'once', wake_message: 'refused', delay_seconds: 0, max_failures: 2 });
      const dispatcher = s.makeDispatcher();
      await dispatcher.runOnce();
      s.clock.advance(10_000);
      await dispatcher.runOnce();
      const after = await read();
      const delta = metricDeltas(before, after);
      assert.equal(delta('scheduler_wake_failures_total', { reason: 'http_5xx' }), 2);
      assert.equal(delta('scheduler_fires_total', { outcome: 'retrying' }), 1);
      assert.equal(delta('scheduler_fires_total', { outcome: 'failed' }), 1);
      assert.equal(delta('scheduler_fires_total', { outcome: 'delivered' }), 0);
    });

    test('label values are bounded: route templates, never an alarm id or a DID', async () => {
      const id = await create({ kind: 'once', wake_message: 'look me up', delay_seconds: 3600 });
      const token = (await s.agent(agent.key)).token;
      assert.equal((await s.call('GET', `/v1/alarms/${id}`, { token })).status, 200);
      const text = await read();
      assert.ok((metricValue(text, 'http_requests_total', { route: '/v1/alarms/:id', status_class: '2xx' }) ?? 0) >= 1);
      assert.ok((metricValue(text, 'db_query_duration_seconds_count', { outcome: 'ok' }) ?? 0) > 0, 'the database is counted too');
      assert.doesNotMatch(text, new RegExp(id));
      assertBoundedLabels(text);
    });
  });
}
