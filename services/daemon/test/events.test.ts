import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { openSse, type SseClient } from '@platform/testkit/sse-client';
import { daemonToken, gateStep, modelStep, railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon } from './harness.ts';

const auth = { authorization: `Bearer ${daemonToken}` };
const gatedPlan = { steps: [gateStep('ask', 'Proceed?', ['yes', 'no']), modelStep('work', 'Do the work', ['ask'])] };

describe('live events (SSE)', () => {
  let stack: Stack;
  let daemon: TestDaemon;
  const streams: SseClient[] = [];
  const open = async (path: string, headers: Record<string, string> = {}, options: { read?: boolean } = {}) => {
    const stream = await openSse(`${daemon.url}${path}`, { ...auth, ...headers }, options);
    streams.push(stream);
    return stream;
  };

  before(async () => {
    stack = await startStack({ gateway: false, script: railScript({ plans: [gatedPlan], answer: 'Work done.' }) });
    daemon = await startDaemon({ ...stack.env, DAEMON_SUBSCRIBER_BUFFER_BYTES: '262144', DAEMON_MAX_SUBSCRIBERS: '6' });
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('an intent stream starts with a snapshot, carries the envelopes by seq, and replays from the journal after a disconnect', async () => {
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'careful work' });
    const first = await open(`/events?intent_id=${id}`);
    assert.equal(first.status, 200);
    assert.equal(first.headers['content-type'], 'text/event-stream');
    await eventually(() => first.events.some((event) => event.event === 'gate.invoked'), 'the gate on the stream');
    assert.equal(first.events[0]?.event, 'snapshot');
    assert.equal(first.events[0]?.id, String(first.events[0]?.data.last_seq), 'a first snapshot carries the seq it shows');
    const gate = first.events.find((event) => event.event === 'gate.invoked');
    assert.deepEqual(gate?.data.envelope.body.options, ['yes', 'no']);
    assert.equal(gate?.id, String(gate?.data.envelope.seq));
    const status = first.events.find((event) => event.event === 'status');
    assert.match(status?.id ?? '', /^\d+\.\d+$/, 'ephemeral events carry <seq>.<n>');
    const lastSeen = gate?.id as string;
    first.close();

    await daemon.ok('POST', `/intents/${id}/gates/ask/answer`, { approved: true, answer: 'yes' });
    await daemon.daemon.runner.waitForEnd(id);

    const again = await open(`/events?intent_id=${id}`, { 'last-event-id': lastSeen });
    await eventually(() => again.ended, 'the stream ends after the terminal event');
    assert.equal(again.events[0]?.event, 'snapshot');
    assert.equal(again.events[0]?.data.status, 'completed');
    assert.equal(again.events[0]?.id, lastSeen, 'before a replay the snapshot keeps the client where it was, so a cut replay resumes whole');
    const replayed = again.events.slice(1).map((event) => [event.id, event.event]);
    const seq = Number(lastSeen);
    assert.deepEqual(replayed, [
      [String(seq + 1), 'gate.answered'],
      [String(seq + 2), 'step.started'],
      [String(seq + 3), 'step.completed'],
      [String(seq + 4), 'intent.attest'],
    ]);
    assert.equal(again.events.at(-1)?.data.envelope.body.answer, 'Work done.');
  });

  test('a client that received only the snapshot resumes from its id: every envelope after it, none before, none twice', async () => {
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'more careful work' });
    await eventually(async () => (await daemon.ok('GET', `/intents/${id}/gates`)).pending.length === 1, 'waiting at its gate');
    const first = await open(`/events?intent_id=${id}`);
    await eventually(() => first.events.length > 0, 'the snapshot');
    first.close();
    const snapshot = first.events[0];
    assert.equal(snapshot?.event, 'snapshot');
    assert.equal(snapshot?.data.pending_gates.length, 1);
    assert.equal(snapshot?.id, String(snapshot?.data.last_seq));

    await daemon.ok('POST', `/intents/${id}/gates/ask/answer`, { approved: true, answer: 'yes' });
    await daemon.daemon.runner.waitForEnd(id);
    const resumed = await open(`/events?intent_id=${id}`, { 'last-event-id': snapshot?.id as string });
    await eventually(() => resumed.ended, 'the stream ends after the terminal event');
    const seq = Number(snapshot?.id);
    assert.deepEqual(
      resumed.events.slice(1).map((event) => [event.id, event.event]),
      [
        [String(seq + 1), 'gate.answered'],
        [String(seq + 2), 'step.started'],
        [String(seq + 3), 'step.completed'],
        [String(seq + 4), 'intent.attest'],
      ],
    );
  });

  test('the unfiltered stream: a transient event and the missed-events notice carry ids that resume after the last kept event', async () => {
    const broker = daemon.daemon.broker;
    const live = await open('/events');
    await eventually(() => broker.stats().subscribers >= 1, 'subscribed');
    broker.publish({ event: 'notice', data: { mark: 'before' } });
    broker.publishTransient({ event: 'say.partial', data: { text: 'Hel' } });
    broker.publishTransient({ event: 'say.partial', data: { text: 'Hello' } });
    broker.publish({ event: 'notice', data: { mark: 'after' } });
    await eventually(() => live.events.length === 4, 'four events');
    live.close();
    const [kept, firstPartial, secondPartial] = live.events;
    assert.match(kept?.id ?? '', /^[0-9a-f]{8}-\d+$/);
    assert.deepEqual([firstPartial?.id, secondPartial?.id], [`${kept?.id}.1`, `${kept?.id}.2`], 'transient ids count on from the kept event before them');
    /** The marks of what a stream resumed from `id` opens with. */
    const replayedAfter = async (id: string | undefined) => {
      const resumed = await open('/events', { 'last-event-id': id as string });
      await eventually(() => resumed.events.length > 0, 'the replay');
      resumed.close();
      return resumed.events.map((event) => [event.event, event.data.mark]);
    };
    assert.deepEqual(await replayedAfter(firstPartial?.id), [['notice', 'after']], 'what followed the preview, not what came before it, and no preview');

    const stale = await open('/events', { 'last-event-id': 'deadbeef-1' });
    await eventually(() => stale.events.length > 0, 'the notice');
    stale.close();
    const notice = stale.events[0];
    assert.deepEqual(
      [notice?.event, notice?.data.kind, notice?.id],
      ['notice', 'missed_events', live.events.at(-1)?.id],
      'the stream position when it was sent',
    );
    broker.publish({ event: 'notice', data: { mark: 'later' } });
    assert.deepEqual(await replayedAfter(notice?.id), [['notice', 'later']], 'what came after the notice, with no second notice');
  });

  test('the unfiltered stream carries the transcript with ids, replays recent events on Last-Event-ID, and says when it cannot', async () => {
    stack.model.setScript(railScript({ chat: () => ({ reply: 'Hi there.', task: null, remember: [] }) }));
    const live = await open('/events');
    await eventually(() => daemon.daemon.broker.stats().subscribers >= 1, 'subscribed');
    await daemon.ok('POST', '/chat', { message: 'hi', conversation_id: 'sse' });
    await eventually(() => live.events.some((event) => event.event === 'say'), 'the say event');
    const message = live.events.find((event) => event.event === 'message');
    const say = live.events.find((event) => event.event === 'say');
    assert.deepEqual([message?.data.text, say?.data.text, say?.data.conversation_id], ['hi', 'Hi there.', 'sse']);
    live.close();

    const resumed = await open('/events', { 'last-event-id': message?.id as string });
    await eventually(() => resumed.events.some((event) => event.event === 'say'), 'say replayed');
    assert.equal(resumed.events.find((event) => event.event === 'say')?.id, say?.id);
    resumed.close();

    const stale = await open('/events', { 'last-event-id': 'deadbeef-1' });
    await eventually(() => stale.events.length > 0, 'a notice');
    assert.deepEqual([stale.events[0]?.event, stale.events[0]?.data.kind], ['notice', 'missed_events']);
    stale.close();
  });

  test('a subscriber that stops reading loses events (counted) while the others receive every one; it learns how many', async () => {
    const slow = await open('/events', {}, { read: false });
    const fast = await open('/events');
    await eventually(() => daemon.daemon.broker.stats().subscribers >= 2, 'both subscribed');
    // 20 MiB of events, each published once the reading subscriber has the one before: only the other falls behind.
    const padding = 'x'.repeat(64 * 1024);
    let largest = 0;
    for (let index = 0; index < 320; index++) {
      daemon.daemon.broker.publish({ event: 'notice', data: { index, padding } });
      largest = Math.max(largest, daemon.daemon.broker.stats().largest_buffer_bytes);
      await eventually(
        () => fast.events.length === index + 1,
        () => `notice ${index}`,
      );
    }
    assert.deepEqual(
      fast.events.map((event) => event.data.index),
      Array.from({ length: 320 }, (_, index) => index),
    );
    const health = await daemon.call('GET', '/healthz', { bearer: null });
    const broker = health.json.data.broker;
    assert.ok(broker.dropped_events > 0, 'the slow subscriber lost events');
    assert.ok(largest <= 262_144, `no buffer grew past its limit (largest ${largest})`);
    assert.equal(broker.congested_subscribers, 1);
    assert.equal(broker.buffer_limit_bytes, 262_144);

    let text = '';
    slow.response.setEncoding('utf8');
    slow.response.on('data', (chunk: string) => {
      text += chunk;
    });
    await eventually(() => /event: dropped\ndata: \{"count":\d+/.test(text), 'the dropped notice');
    const count = Number(/"count":(\d+)/.exec(text)?.[1]);
    assert.equal(count, broker.dropped_events);
    slow.close();
    fast.close();
    // Its id is the last event it did receive, so resuming from it replays the first one it lost.
    const ids = [...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
    const droppedId = /id: (.+)\nevent: dropped\n/.exec(text)?.[1];
    assert.equal(droppedId, ids.at(-2), 'the id of the last notice it received');
    const received = [...text.matchAll(/"index":(\d+)/g)].map((match) => Number(match[1]));
    const resumed = await open('/events', { 'last-event-id': droppedId as string });
    await eventually(() => resumed.events.length > 0, 'the replay');
    assert.equal(resumed.events[0]?.data.index, (received.at(-1) as number) + 1);
    resumed.close();
  });

  test('heartbeats come on the injected clock; a full broker answers 503; bad input is a clear 400 or 404', async () => {
    const quiet = await open('/events');
    await eventually(() => daemon.daemon.broker.stats().subscribers >= 1, 'subscribed');
    daemon.clock.advance(15_000);
    await eventually(() => quiet.other.includes(': heartbeat'), 'a heartbeat');

    const more = await Promise.all(Array.from({ length: 5 }, () => open('/events')));
    await eventually(() => daemon.daemon.broker.stats().subscribers === 6, 'six subscribers');
    const refused = await daemon.call('GET', '/events');
    assert.deepEqual([refused.status, refused.json.error.code], [503, 'unavailable']);
    for (const stream of [quiet, ...more]) stream.close();
    await eventually(() => daemon.daemon.broker.stats().subscribers === 0, 'all gone');

    const unknown = await daemon.call('GET', `/events?intent_id=${'0'.repeat(64)}`);
    assert.deepEqual([unknown.status, unknown.json.error.code], [404, 'not_found']);
    const anyIntent = daemon.daemon.book.list({ limit: 1 })[0]?.id as string;
    const bad = await daemon.call('GET', `/events?intent_id=${anyIntent}`, { headers: { 'last-event-id': 'abc' } });
    assert.deepEqual([bad.status, bad.json.error.code], [400, 'invalid_request']);
    const malformed = await daemon.call('GET', '/events?intent_id=xyz');
    assert.equal(malformed.status, 400);
  });
});
