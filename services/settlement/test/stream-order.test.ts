import assert from 'node:assert/strict';
import { after, afterEach, before, describe, type TestContext, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually, pollUntil } from '@platform/testkit/eventually';
import { openSse, type SseClient } from '@platform/testkit/sse-client';
import { type Settlement, startSettlement } from './harness.ts';

/** What a client can compare between two streams: each event's id, its type and what it names. */
const shape = (client: SseClient) =>
  client.events.map((event) => `${event.id} ${event.event} ${event.event === 'anchor' ? `batch ${event.data.number}` : `seq ${event.data.seq}`}`);

/**
 * Pays from several payers at once while windows are closed now and then, so that receipts commit while each
 * batch's tree is being built; ends with one more close and returns that last batch's number.
 */
async function payWhileClosing(s: Settlement, options: { payers: number; paysEach: number; settleEvery: number }): Promise<number> {
  const payers = await Promise.all(Array.from({ length: options.payers }, () => s.fundedAgent('1000')));
  const payee = await s.agent();
  let paid = 0;
  const settles: Array<Promise<unknown>> = [];
  await Promise.all(
    payers.map(async (payer) => {
      for (let i = 0; i < options.paysEach; i++) {
        const response = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '0.01' } });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        // Not awaited: the pays go on while the batch is built and written.
        if (++paid % options.settleEvery === 0) settles.push(s.call('POST', '/v1/settle', { token: payer.token }));
      }
    }),
  );
  for (const settled of await Promise.all(settles)) assert.equal((settled as { status: number }).status, 200);
  // One more receipt, so the last close always makes a batch.
  await s.call('POST', '/v1/pay', { token: payers[0]?.token ?? '', body: { to: payee.did, amount: '0.01' } });
  const last = await s.call('POST', '/v1/settle', { token: payee.token });
  assert.equal(last.status, 200);
  return last.body.data.batch.number as number;
}

/** A stream closed when the test ends, whatever happens. */
async function stream(t: TestContext, url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await openSse(url, headers);
  t.after(() => client.close());
  return client;
}

const hasAnchor = (client: SseClient, number: number) => client.events.some((event) => event.event === 'anchor' && event.data.number === number);

/** Everything from the start of the log, read as a reconnecting client would. */
async function replayAll(url: string, lastBatch: number): Promise<SseClient> {
  const replay = await openSse(url, { 'last-event-id': '0' });
  await pollUntil(() => hasAnchor(replay, lastBatch), `the replay reaches batch ${lastBatch}`, { timeoutMs: 30_000, intervalMs: 10 });
  replay.close();
  return replay;
}

function assertIncreasing(client: SseClient): void {
  const ids = client.events.map((event) => BigInt(event.id ?? -1));
  for (let i = 1; i < ids.length; i++) assert.ok((ids[i] as bigint) > (ids[i - 1] as bigint), `ids increase: ${ids[i - 1]} then ${ids[i]}`);
}

for (const engine of testEngines()) {
  describe(`live delivery equals replay on ${engine.name}`, () => {
    let s: Settlement;
    let url: string;
    before(async () => {
      // Windows close by count and by amount too: those closes do not hold the writer while the batch is built.
      s = await startSettlement(engine, { window: { maxReceipts: 20, immediateMicros: 50_000_000n } });
      url = `${await s.app.listen({ host: '127.0.0.1', port: 0 })}/v1/stream`;
    });
    after(async () => s.close());
    // Each test starts with nobody subscribed.
    afterEach(() => pollUntil(() => s.hub.subscriberCount === 0, 'every stream is closed', { timeoutMs: 10_000, intervalMs: 10 }));

    test('a live subscriber gets every anchor of batches closed while pays keep committing, in the order a replay gives', async (t) => {
      const live = await stream(t, url);
      await eventually(() => s.hub.subscriberCount === 1, 'the stream is open');
      // Another instance on the same database learns of events only through NOTIFY and its own reads.
      const standby = engine.name === 'postgres' ? await startSettlement(engine, { databaseOptions: s.databaseOptions, clock: s.clock }) : undefined;
      const standbyUrl = standby ? `${await standby.app.listen({ host: '127.0.0.1', port: 0 })}/v1/stream` : undefined;
      const remote = standbyUrl ? await stream(t, standbyUrl) : undefined;
      if (standby) await eventually(() => standby.hub.subscriberCount === 1, 'the standby stream is open');
      try {
        const lastBatch = await payWhileClosing(s, { payers: 8, paysEach: 25, settleEvery: 15 });
        await pollUntil(() => hasAnchor(live, lastBatch), 'the last anchor arrives live', { timeoutMs: 30_000, intervalMs: 10 });
        const replay = await replayAll(url, lastBatch);
        live.close();
        const from = live.events[0]?.id;
        const expected = shape(replay).slice(replay.events.findIndex((event) => event.id === from));
        assert.ok(expected.filter((line) => line.includes(' anchor ')).length >= 5, 'several batches closed during the pays');
        assert.deepEqual(shape(live), expected);
        assertIncreasing(live);
        if (remote && standby) {
          await pollUntil(() => hasAnchor(remote, lastBatch), 'the last anchor arrives at the standby', { timeoutMs: 30_000, intervalMs: 10 });
          remote.close();
          assert.deepEqual(shape(remote), expected);
        }
      } finally {
        remote?.close();
        await standby?.close();
      }
    });

    test('streams that join while nobody else listens (the hub only moved its position) get every anchor written after they joined', async (t) => {
      assert.equal(s.hub.subscriberCount, 0);
      const latestBatch = async (): Promise<number> => (await s.call('GET', '/v1/batches?limit=1')).body.data.batches[0]?.number ?? 0;
      const batchesBefore = await latestBatch();
      const run = payWhileClosing(s, { payers: 8, paysEach: 25, settleEvery: 1000 });
      // Join once a few batches were closed with nobody subscribed, while pays and closes go on.
      await pollUntil(async () => (await latestBatch()) >= batchesBefore + 3, 'batches close', { timeoutMs: 60_000, intervalMs: 5 });
      const live = await stream(t, url);
      const replaying = await stream(t, url, { 'last-event-id': '0' });
      await eventually(() => s.hub.subscriberCount === 2, 'both streams are open');
      // Every batch after this one was written after both streams joined.
      const writtenBeforeJoining = await latestBatch();
      const lastBatch = await run;
      await pollUntil(() => hasAnchor(live, lastBatch) && hasAnchor(replaying, lastBatch), 'the last anchor arrives', { timeoutMs: 30_000, intervalMs: 10 });
      live.close();
      replaying.close();
      const replay = await replayAll(url, lastBatch);
      const anchorsAfterJoining = replay.events.filter((event) => event.event === 'anchor' && event.data.number > writtenBeforeJoining);
      assert.ok(anchorsAfterJoining.length >= 2, 'batches were written after the streams joined');
      for (const anchor of anchorsAfterJoining) assert.ok(hasAnchor(live, anchor.data.number), `batch ${anchor.data.number} arrives live`);
      assert.deepEqual(shape(live), shape(replay).slice(replay.events.findIndex((event) => event.id === live.events[0]?.id)));
      assert.deepEqual(shape(replaying), shape(replay));
      assertIncreasing(live);
      assertIncreasing(replaying);
    });

    test('two batches that become visible with no receipt between them have two ids, both delivered live in order', async (t) => {
      const live = await stream(t, url);
      await eventually(() => s.hub.subscriberCount === 1, 'the stream is open');
      const payer = await s.fundedAgent('10000');
      const payee = await s.agent();
      let adjacent = false;
      let lastBatch = 0;
      // The first close of a round races pays, so its batch becomes visible after some of them; the second (asked for
      // once they are all answered) closes the window of exactly those pays, so both become visible at the same place.
      for (let round = 0; round < 20 && !adjacent; round++) {
        // A large pay closes its window as soon as it commits; the small ones sent on its answer commit while that
        // batch is being built.
        assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '50' } })).status, 200);
        const pays = Array.from({ length: 6 }, () => s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '0.01' } }));
        for (const paid of await Promise.all(pays)) assert.equal(paid.status, 200);
        const second = await s.call('POST', '/v1/settle', { token: payer.token });
        if (!second.body.data.closed) continue;
        lastBatch = second.body.data.batch.number;
        const replay = await replayAll(url, lastBatch);
        const [before, last] = replay.events.slice(-2);
        adjacent = before?.event === 'anchor' && last?.event === 'anchor';
      }
      assert.ok(adjacent, 'two anchors with no transfer between them');
      await pollUntil(() => hasAnchor(live, lastBatch), 'the last anchor arrives live', { timeoutMs: 30_000, intervalMs: 10 });
      live.close();
      const replay = await replayAll(url, lastBatch);
      assert.deepEqual(shape(live), shape(replay).slice(replay.events.findIndex((event) => event.id === live.events[0]?.id)));
      assertIncreasing(live);
    });
  });
}
