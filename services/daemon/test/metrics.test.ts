import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { assertBoundedLabels, sampleValue } from '@platform/testkit/metrics-text';
import { gatedPlan, railScript } from '@platform/testkit/rail-script';
import { openSse, type SseClient } from '@platform/testkit/sse-client';
import { daemonToken, removeFolder, type Stack, startDaemon, startStack, type TestDaemon } from './harness.ts';

const metricsToken = 'daemon-metrics-token-for-tests';

describe('daemon metrics', () => {
  let stack: Stack;
  let daemon: TestDaemon;
  const streams: SseClient[] = [];
  const scrape = async (bearer: string | null = metricsToken) => daemon.call('GET', '/metrics', { bearer });
  /** Envelopes in the journal on disk, every intent's. */
  const envelopesOnDisk = () => {
    const root = join(daemon.dataDir, 'journal');
    return readdirSync(root).reduce((sum, intent) => sum + readdirSync(join(root, intent)).filter((name) => name.endsWith('.json')).length, 0);
  };

  before(async () => {
    stack = await startStack({ gateway: false, script: railScript({ plans: [gatedPlan()], answer: 'Work done.' }) });
    daemon = await startDaemon({ ...stack.env, PLATFORM_METRICS_TOKEN: metricsToken, DAEMON_SUBSCRIBER_BUFFER_BYTES: '65536' });
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('an intent waiting at its gate, then completed: intents by state, gates pending and journal appends follow it', async () => {
    const start = (await scrape()).text;
    assert.equal(sampleValue(start, 'daemon_intents', { state: 'executing' }), 0, 'every state is there from the start');
    assert.equal(sampleValue(start, 'daemon_journal_appends_total'), 0);

    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'careful work' });
    await eventually(() => (daemon.daemon.book.state(id)?.gates ?? []).some((gate) => gate.status === 'pending'), 'the pending gate');
    const waiting = (await scrape()).text;
    assert.equal(sampleValue(waiting, 'daemon_intents', { state: 'executing' }), 1);
    assert.equal(sampleValue(waiting, 'daemon_gates_pending'), 1);
    assert.equal(sampleValue(waiting, 'daemon_journal_appends_total'), envelopesOnDisk());

    await daemon.ok('POST', `/intents/${id}/gates/ask/answer`, { approved: true, answer: 'yes' });
    await daemon.daemon.runner.waitForEnd(id);
    const done = (await scrape()).text;
    assert.equal(sampleValue(done, 'daemon_intents', { state: 'executing' }), 0);
    assert.equal(sampleValue(done, 'daemon_intents', { state: 'completed' }), 1);
    assert.equal(sampleValue(done, 'daemon_gates_pending'), 0);
    assert.equal(sampleValue(done, 'daemon_journal_appends_total'), envelopesOnDisk(), 'one per envelope written');
    assert.ok((sampleValue(done, 'http_requests_total', { method: 'POST', route: '/messages/async', status_class: '2xx' }) as number) === 1);
    assert.doesNotMatch(done, new RegExp(id), 'no intent id in any label');
    assertBoundedLabels(done);
  });

  test('open event streams are counted, and the events a slow one loses', async () => {
    const auth = { authorization: `Bearer ${daemonToken}` };
    const slow = await openSse(`${daemon.url}/events`, auth, { read: false });
    const fast = await openSse(`${daemon.url}/events`, auth);
    streams.push(slow, fast);
    await eventually(() => daemon.daemon.broker.subscriberCount === 2, 'both subscribed');
    assert.equal(sampleValue((await scrape()).text, 'daemon_sse_subscribers'), 2);
    const padding = 'x'.repeat(16 * 1024);
    for (let index = 0; daemon.daemon.broker.stats().dropped_events === 0; index++) {
      assert.ok(index < 2000, 'the slow subscriber never fell behind');
      daemon.daemon.broker.publish({ event: 'notice', data: { index, padding } });
      await eventually(() => fast.events.at(-1)?.data.index === index, `notice ${index}`);
    }
    const text = (await scrape()).text;
    assert.equal(sampleValue(text, 'daemon_sse_dropped_events_total'), daemon.daemon.broker.stats().dropped_events);
    slow.close();
    fast.close();
    await eventually(() => daemon.daemon.broker.subscriberCount === 0, 'both gone');
    assert.equal(sampleValue((await scrape()).text, 'daemon_sse_subscribers'), 0);
  });

  test('/metrics wants the metrics bearer: 401 in the envelope without it, with a wrong one or with the daemon’s own', async () => {
    for (const bearer of [null, 'wrong', daemonToken]) {
      const answer = await scrape(bearer);
      assert.equal(answer.status, 401, `with ${bearer}`);
      assert.equal(answer.json.error.code, 'unauthorized');
    }
    const json = await daemon.call('GET', '/metrics', { bearer: metricsToken, headers: { accept: 'application/json' } });
    assert.equal(json.status, 200);
    assert.ok(
      json.json.some((metric: { name: string }) => metric.name === 'daemon_intents'),
      'the JSON form the router sums',
    );
  });
});
