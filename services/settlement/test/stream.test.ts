import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { type Settlement, startSettlement } from './harness.ts';

interface Frame {
  id: string;
  event: string;
  data: { seq?: number; kind?: string; log_size?: number };
}

/**
 * A real SSE client over fetch: collects frames until `count` have arrived, then disconnects. Gives up after
 * 30 s with what it got, so a missing event fails the test with evidence instead of running into the runner's timeout.
 */
async function readFrames(url: string, count: number, lastEventId?: string, state: () => string = () => ''): Promise<Frame[]> {
  const abort = new AbortController();
  const frames: Frame[] = [];
  const guard = setTimeout(() => abort.abort(new Error(`${frames.length} of ${count} frames after 30 s: ${JSON.stringify(frames)}; ${state()}`)), 30_000);
  try {
    return await collect(url, count, lastEventId, abort, frames);
  } finally {
    clearTimeout(guard);
    abort.abort();
  }
}

async function collect(url: string, count: number, lastEventId: string | undefined, abort: AbortController, frames: Frame[]): Promise<Frame[]> {
  const response = await fetch(url, { signal: abort.signal, headers: lastEventId ? { 'last-event-id': lastEventId } : {} });
  assert.equal(response.headers.get('content-type')?.split(';')[0], 'text/event-stream');
  const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  while (frames.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
      if (fields.id !== undefined) frames.push({ id: fields.id, event: fields.event ?? 'message', data: JSON.parse(fields.data ?? 'null') });
      end = buffer.indexOf('\n\n');
    }
  }
  return frames;
}

for (const engine of testEngines()) {
  describe(`the live stream on ${engine.name}`, () => {
    let s: Settlement;
    let url: string;
    before(async () => {
      s = await startSettlement(engine);
      url = `${await s.app.listen({ host: '127.0.0.1', port: 0 })}/v1/stream`;
    });
    after(async () => s.close());

    test('transfer events arrive live in seq order; a reconnect with Last-Event-ID replays the missed transfer and anchor', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const hubState = () => `hub head ${s.hub.head}, ${s.hub.subscriberCount} subscriber(s)`;
      const live = readFrames(url, 2, undefined, hubState);
      // The subscriber starts at the head: wait until it is registered before paying.
      await eventually(() => s.hub.subscriberCount === 1, 'the stream is open');
      const first = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
      const second = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '2' } });
      const seen = await live;
      assert.deepEqual(
        seen.map((frame) => [frame.event, frame.data.seq]),
        [
          ['transfer', first.body.data.seq],
          ['transfer', second.body.data.seq],
        ],
      );
      const missed = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '3' } });
      const settled = await s.call('POST', '/v1/settle', { token: payer.token });
      const replayed = await readFrames(url, 2, seen.at(-1)?.id, hubState);
      assert.deepEqual(
        replayed.map((frame) => [frame.event, frame.event === 'anchor' ? frame.data.log_size : frame.data.seq]),
        [
          ['transfer', missed.body.data.seq],
          ['anchor', settled.body.data.batch.log_size],
        ],
      );
      // Event ids on a new ledger: 16·seq for a transfer; an anchor takes the next id after the receipts committed
      // before it was written (here the last one it covers).
      assert.deepEqual(
        replayed.map((frame) => Number(frame.id)),
        [16 * missed.body.data.seq, 16 * settled.body.data.batch.log_size + 1],
      );
      assert.deepEqual(
        seen.map((frame) => Number(frame.id)),
        [16 * first.body.data.seq, 16 * second.body.data.seq],
      );
    });

    test('a malformed Last-Event-ID is a 400 in the envelope', async () => {
      const response = await fetch(url, { headers: { 'last-event-id': 'abc' } });
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'invalid_request');
    });
  });
}
