import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { eventsArrived, openSse, type SseEvent } from '@platform/testkit/sse-client';
import { type Settlement, startSettlement } from './harness.ts';

/** Opens the stream with the testkit's SSE client, takes its first `count` events and disconnects. */
async function readFrames(url: string, count: number, lastEventId: string | undefined, state: () => string): Promise<SseEvent[]> {
  const client = await openSse(url, lastEventId ? { 'last-event-id': lastEventId } : {});
  try {
    assert.equal(client.headers['content-type']?.split(';')[0], 'text/event-stream');
    return await eventsArrived(client, count, { state });
  } finally {
    client.close();
  }
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
