import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { openSse, type SseClient, type SseEvent } from '@platform/testkit/sse-client';
import { partialAnswerIntervalMs } from '../src/chat/reply-preview.ts';
import { daemonToken, railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon } from './harness.ts';

const auth = { authorization: `Bearer ${daemonToken}` };
const partials = (stream: SseClient, conversation: string) =>
  stream.events.filter((event) => event.event === 'say.partial' && event.data.conversation_id === conversation);
const transcriptEvents = (stream: SseClient, conversation: string) =>
  stream.events.filter((event) => event.event !== 'say.partial' && event.data?.conversation_id === conversation);

/** A promise the test resolves when it chooses: the model's held-back chunk. */
function heldChunk(text: string): { chunk: Promise<string>; release: () => void } {
  let release = () => {};
  const chunk = new Promise<string>((resolve) => {
    release = () => resolve(text);
  });
  return { chunk, release };
}

/** A stack, a daemon on it with `env`, and the daemon's unfiltered stream open from the start. */
async function startWatched(options: { gateway: boolean; env?: Record<string, string> }) {
  const stack = await startStack({ gateway: options.gateway });
  const daemon = await startDaemon({ ...stack.env, ...options.env });
  const stream = await openSse(`${daemon.url}/events`, auth);
  return {
    stack,
    daemon,
    stream,
    async close() {
      stream.close();
      await daemon.stop();
      await stack.close();
      removeFolder(daemon.dataDir);
    },
  };
}

describe('a chat answer streams in as say.partial events before its say', () => {
  let stack: Stack;
  let daemon: TestDaemon;
  let stream: SseClient;
  let close: () => Promise<void> = async () => {};

  before(async () => {
    ({ stack, daemon, stream, close } = await startWatched({ gateway: true }));
  });
  after(() => close());

  /**
   * Waits for a preview showing exactly `text`. Previews are at most one per interval of the daemon's (manual) clock,
   * so after each one that is not there yet the clock moves one interval on, which lets the next one out.
   */
  async function previewShowing(conversation: string, text: string): Promise<SseEvent> {
    let seen = 0;
    await eventually(
      () => {
        const events = partials(stream, conversation);
        if (events.at(-1)?.data.text === text) return true;
        if (events.length > seen) {
          seen = events.length;
          daemon.clock.advance(partialAnswerIntervalMs);
        }
        return false;
      },
      () => `a preview showing ${JSON.stringify(text)}; saw ${JSON.stringify(partials(stream, conversation).map((event) => event.data))}`,
    );
    return partials(stream, conversation).at(-1) as SseEvent;
  }

  test('through the real gateway: the reply grows while the model holds back its last chunk, then the say replaces it', async () => {
    const answer = JSON.stringify({ reply: 'Trains leave at nine, ten and \u00e9leven \ud83d\ude82.', task: null, remember: [] });
    const cut = answer.indexOf('ten') + 'ten'.length;
    const last = heldChunk(answer.slice(cut));
    stack.model.setScript(railScript({ chat: () => ({ chunks: [answer.slice(0, 12), answer.slice(12, 25), answer.slice(25, cut), last.chunk] }) }));

    const turn = daemon.ok('POST', '/chat', { message: 'When do trains leave?', conversation_id: 'trains' });
    const shown = await previewShowing('trains', 'Trains leave at nine, ten');
    const opened = transcriptEvents(stream, 'trains').find((event) => event.event === 'message');
    assert.deepEqual(shown.data, { conversation_id: 'trains', reply_to: opened?.data.seq, attempt: 1, text: 'Trains leave at nine, ten' });
    assert.ok(shown.id?.startsWith(`${opened?.id}.`), `a preview's id (${shown.id}) resumes after the last kept event, the message`);
    assert.equal(transcriptEvents(stream, 'trains').filter((event) => event.event === 'say').length, 0, 'no say while the model is writing');
    const asked = stack.model.received.at(-1);
    assert.equal(asked?.body.stream, true);
    assert.equal(asked?.schemaName, 'chat_turn', 'the structured answer is asked for while streaming');
    assert.equal(asked?.body.stream_options?.include_usage, true, 'the gateway meters the stream by its usage chunk');

    last.release();
    assert.equal((await turn).reply, 'Trains leave at nine, ten and \u00e9leven \ud83d\ude82.');
    await eventually(() => transcriptEvents(stream, 'trains').some((event) => event.event === 'say'), 'the say');
    const order = stream.events.filter((event) => event.data?.conversation_id === 'trains').map((event) => event.event);
    assert.equal(order.indexOf('say'), order.lastIndexOf('say'), 'one say');
    assert.ok(order.lastIndexOf('say.partial') < order.indexOf('say'), `every preview before the say: ${order.join(', ')}`);
    const texts = partials(stream, 'trains').map((event) => event.data.text as string);
    for (const [index, text] of texts.entries()) {
      assert.ok('Trains leave at nine, ten and \u00e9leven \ud83d\ude82.'.startsWith(text), text);
      assert.ok(text.length >= (texts[index - 1]?.length ?? 0), 'a preview never shrinks within an attempt');
    }

    // The gateway booked the streamed call by the usage chunk it asked for (and hid from the daemon), not its reservation.
    const ledger = await httpCall(stack.services.gateway?.url as string, 'GET', '/v1/admin/ledger?limit=1', { bearer: 'gw-admin' });
    const [row] = ledger.json.data;
    assert.deepEqual([row.kind_route, row.streamed, row.basis, row.output_tokens], ['chat', true, 'usage', Math.ceil(answer.length / 4)]);

    const transcript = await daemon.ok('GET', '/conversations/trains');
    assert.deepEqual(
      transcript.entries.map((entry: { role: string; text: string }) => [entry.role, entry.text]),
      [
        ['user', 'When do trains leave?'],
        ['assistant', 'Trains leave at nine, ten and \u00e9leven \ud83d\ude82.'],
      ],
    );

    // A resume from a preview (a client that saw only that since the message) replays the say, not the message before
    // it and no preview: previews are not kept for replay.
    const resumed = await openSse(`${daemon.url}/events`, { ...auth, 'last-event-id': shown.id as string });
    try {
      await eventually(() => resumed.events.some((event) => event.event === 'say'), 'the say replayed');
      assert.deepEqual(
        resumed.events.map((event) => event.event),
        ['say'],
      );
    } finally {
      resumed.close();
    }
  });

  test('an answer asked once more takes back what the first showed at once, then the say replaces it', async () => {
    let chatCalls = 0;
    stack.model.setScript(
      railScript({
        chat: () => (++chatCalls === 1 ? { reply: 'A wrong first answer', task: 42, remember: [] } : { reply: 'The right answer', task: null, remember: [] }),
      }),
    );
    const turn = await daemon.ok('POST', '/chat', { message: 'Answer twice', conversation_id: 'retry' });
    assert.equal(turn.reply, 'The right answer');
    assert.equal(chatCalls, 2);
    await eventually(() => transcriptEvents(stream, 'retry').some((event) => event.event === 'say'), 'the say');
    const previews = partials(stream, 'retry').map((event) => ({ attempt: event.data.attempt as number, text: event.data.text as string }));
    assert.ok(previews.length >= 2, JSON.stringify(previews));
    assert.ok('A wrong first answer'.startsWith(previews[0]?.text ?? '') && previews[0]?.attempt === 1, JSON.stringify(previews));
    const retried = previews.findIndex((preview) => preview.attempt === 2);
    assert.deepEqual(previews[retried], { attempt: 2, text: '' }, 'the retry starts by taking the first attempt back');
    for (const preview of previews.slice(retried)) assert.ok('The right answer'.startsWith(preview.text), JSON.stringify(preview));
    const order = stream.events.filter((event) => event.data?.conversation_id === 'retry').map((event) => event.event);
    assert.ok(order.lastIndexOf('say.partial') < order.indexOf('say'), order.join(', '));
    const transcript = await daemon.ok('GET', '/conversations/retry');
    assert.deepEqual(
      transcript.entries.map((entry: { role: string }) => entry.role),
      ['user', 'assistant'],
    );
  });

  test('a model that breaks off mid-answer is a failed turn: the gateway says so in the stream, the notice ends the preview', async () => {
    const answer = JSON.stringify({ reply: 'Half of an answer that never ends', task: null, remember: [] });
    let breakOff = (_reason: Error) => {};
    const never = new Promise<string>((_resolve, reject) => {
      breakOff = reject;
    });
    stack.model.setScript(railScript({ chat: () => ({ chunks: [answer.slice(0, 20), never] }) }));
    const failed = daemon.call('POST', '/chat', { body: { message: 'Start and stop', conversation_id: 'broken' } });
    await previewShowing('broken', 'Half of an');
    breakOff(new Error('the model went away'));
    const answered = await failed;
    assert.deepEqual([answered.status, answered.json.error.code, answered.json.error.reason], [503, 'unavailable', 'upstream_unreachable'], answered.text);
    await eventually(() => transcriptEvents(stream, 'broken').some((event) => event.event === 'notice'), 'the notice');
    const order = stream.events.filter((event) => event.data?.conversation_id === 'broken').map((event) => event.event);
    assert.deepEqual(order.slice(-2), ['say.partial', 'notice'], order.join(', '));
    const transcript = await daemon.ok('GET', '/conversations/broken');
    assert.deepEqual(
      transcript.entries.map((entry: { role: string }) => entry.role),
      ['user', 'notice'],
    );
  });
});

describe('a streamed answer that stalls', () => {
  let watched: Awaited<ReturnType<typeof startWatched>> | undefined;
  before(async () => {
    watched = await startWatched({ gateway: false, env: { DAEMON_MODEL_RETRIES: '1', DAEMON_MODEL_TIMEOUT_MS: '30000' } });
  });
  after(() => watched?.close());

  test('times out on the injected clock mid-stream; the retry takes the preview back and its answer is said', async () => {
    const { stack, daemon, stream } = watched as NonNullable<typeof watched>;
    const stalled = JSON.stringify({ reply: 'Stalled answer', task: null, remember: [] });
    let chatCalls = 0;
    stack.model.setScript(
      railScript({
        chat: () => (++chatCalls === 1 ? { chunks: [stalled.slice(0, 18), new Promise<string>(() => {})] } : { reply: 'Second try', task: null, remember: [] }),
      }),
    );
    const turn = daemon.ok('POST', '/chat', { message: 'Stall, then answer', conversation_id: 'stall' });
    await eventually(() => partials(stream, 'stall').at(-1)?.data.text === 'Stalled ', 'the first attempt previewed');
    const asked = stack.model.received.length;
    daemon.clock.advance(30_000);
    // The retry waits out its backoff on the same clock.
    await eventually(() => {
      if (stack.model.received.length > asked) return true;
      daemon.clock.advance(250);
      return false;
    }, 'the second attempt');
    assert.equal((await turn).reply, 'Second try');
    await eventually(() => transcriptEvents(stream, 'stall').some((event) => event.event === 'say'), 'the say');
    const previews = partials(stream, 'stall').map((event) => [event.data.attempt, event.data.text]);
    assert.deepEqual(previews.slice(0, 2), [
      [1, 'Stalled '],
      [2, ''],
    ]);
    for (const [, text] of previews.slice(1)) assert.ok('Second try'.startsWith(text), JSON.stringify(previews));
  });
});
