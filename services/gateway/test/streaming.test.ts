import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { callerHeaders, type Gateway, models, newActor, startGateway, unitsFor } from './harness.ts';

const streamOf = (content: string, extra: object = {}) => ({
  model: models.small,
  stream: true as const,
  messages: [{ role: 'user' as const, content }],
  ...extra,
});

/** Reads `count` chunks, then leaves (the SDK aborts the request, as a client that goes away mid-answer does). */
async function readThenLeave(stream: AsyncIterable<ChatCompletionChunk>, count: number): Promise<ChatCompletionChunk[]> {
  const seen: ChatCompletionChunk[] = [];
  for await (const chunk of stream) {
    seen.push(chunk);
    if (seen.length === count) break;
  }
  return seen;
}

for (const engine of testEngines()) {
  describe(`streaming on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    test('a stream is debited from its trailing usage before [DONE] reaches the client; the usage chunk the gateway asked for is withheld; no cost headers', async () => {
      const actor = newActor();
      const { data: stream, response } = await gw.client(callerHeaders(actor)).chat.completions.create(streamOf('hi')).withResponse();
      assert.equal(response.headers.get('x-platform-cost-credit'), null);
      assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
      const chunks: ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'word1 word2 word3 word4 word5 ');
      assert.ok(
        chunks.every((chunk) => chunk.choices.length > 0 && !chunk.usage),
        'no usage-only chunk reached a client that did not ask for one',
      );
      assert.equal(gw.upstream.received.at(-1)?.body.stream_options?.include_usage, true, 'the gateway asked the upstream for usage');
      const [row] = await gw.ledger(actor);
      assert.deepEqual([row?.streamed, row?.basis, row?.input_tokens, row?.output_tokens], [true, 'usage', 7, 5]);
      assert.equal(row?.cost_units, unitsFor(7, 1) + unitsFor(5, 2));
      assert.equal((await gw.spend(actor)).reserved, 0n);
    });

    test('a client that asked for usage gets the stream byte for byte, usage chunk included', async () => {
      const actor = newActor();
      const body = streamOf('hi', { stream_options: { include_usage: true }, max_tokens: 20 });
      const response = await gw.http('POST', '/v1/chat/completions', { headers: callerHeaders(actor), body });
      assert.equal(response.status, 200);
      assert.deepEqual(gw.upstream.received.at(-1)?.body, body, 'forwarded unchanged');
      assert.match(response.text, /"choices":\[\],"usage":\{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12\}/);
      assert.ok(response.text.endsWith('data: [DONE]\n\n'));
      assert.equal((await gw.ledger(actor)).length, 1);
    });

    test('chunks are forwarded as they arrive, not when the answer is complete', async () => {
      const stream = await gw.client(callerHeaders(newActor())).chat.completions.create(streamOf('[pause-after=2]'));
      const iterator = stream[Symbol.asyncIterator]();
      const early: string[] = [];
      for (let i = 0; i < 3; i++) early.push((await iterator.next()).value?.choices[0]?.delta.content ?? '');
      assert.deepEqual(early, ['', 'word1 ', 'word2 ']);
      assert.equal(gw.upstream.pausedCount(), 1, 'the upstream is still holding the rest of the answer');
      gw.upstream.release();
      let rest = '';
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest += next.value.choices[0]?.delta.content ?? '';
      assert.equal(rest, 'word3 word4 word5 ');
    });

    test('a client that leaves mid-stream is still debited: the gateway drains the upstream for the usage', async () => {
      const actor = newActor();
      const { streamsCompleted } = gw.upstream.counts();
      const stream = await gw.client(callerHeaders(actor)).chat.completions.create(streamOf('[pause-after=1]'));
      assert.equal((await readThenLeave(stream, 2)).length, 2);
      await eventually(() => gw.drains.active === 1, 'the gateway starts draining the abandoned stream');
      assert.equal((await gw.ledger(actor)).length, 0);
      gw.upstream.release();
      await eventually(async () => (await gw.ledger(actor)).length === 1, 'the drained usage is debited');
      const [row] = await gw.ledger(actor);
      assert.deepEqual([row?.basis, row?.input_tokens, row?.output_tokens], ['usage', 7, 5]);
      assert.equal(gw.upstream.counts().streamsCompleted, streamsCompleted + 1, 'the upstream answer was read to the end');
      await eventually(() => gw.drains.active === 0, 'the drain slot is given back');
      assert.equal((await gw.spend(actor)).reserved, 0n);
    });

    test('when no usage arrives within the drain time, the abandoned stream is charged its reservation', async () => {
      const actor = newActor();
      const { streamsCut } = gw.upstream.counts();
      const stream = await gw.client(callerHeaders(actor)).chat.completions.create(streamOf('[stall-after=1]'));
      await readThenLeave(stream, 2);
      await eventually(() => gw.drains.active === 1, 'draining');
      gw.clock.advance(gw.config.drainTimeoutMs - 1);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal((await gw.ledger(actor)).length, 0, 'not before the drain time is up');
      gw.clock.advance(1);
      await eventually(async () => (await gw.ledger(actor)).length === 1, 'charged at the drain deadline');
      const [row] = await gw.ledger(actor);
      assert.equal(row?.basis, 'reservation');
      assert.equal(row?.output_tokens, 100, 'the reserved output cap');
      assert.equal((await gw.spend(actor)).spent, row?.cost_units);
      await eventually(() => gw.upstream.counts().streamsCut === streamsCut + 1, 'the upstream connection is dropped');
      assert.equal(gw.drains.active, 0);
    });

    test('GATEWAY_MAX_IN_FLIGHT calls are served at once; the next is refused with 503 overloaded, and served once one has ended', async () => {
      const tight = await startGateway(engine, { besides: gw, env: { GATEWAY_MAX_IN_FLIGHT: '2' } });
      const hello = { model: models.small, messages: [{ role: 'user', content: 'hello' }] };
      try {
        // Two streams held open by the upstream: at the limit, both are served.
        const opened = await Promise.all(
          [newActor(), newActor()].map(async (actor) => {
            const iterator = (await tight.client(callerHeaders(actor)).chat.completions.create(streamOf('[pause-after=1]')))[Symbol.asyncIterator]();
            assert.equal((await iterator.next()).value?.choices[0]?.delta.role, 'assistant');
            return iterator;
          }),
        );
        const refused = await tight.http('POST', '/v1/chat/completions', { headers: callerHeaders(newActor()), body: hello });
        assert.equal(refused.status, 503);
        assert.equal(refused.json.error.code, 'overloaded');
        assert.match(refused.json.error.message, /GATEWAY_MAX_IN_FLIGHT/);
        tight.upstream.release();
        for (const iterator of opened) while (!(await iterator.next()).done);
        // Once they have ended, calls are served again.
        for (let i = 0; i < 3; i++) {
          const served = await tight.http('POST', '/v1/chat/completions', { headers: callerHeaders(newActor()), body: hello });
          assert.equal(served.status, 200);
        }
      } finally {
        await tight.close();
      }
    });

    test('past GATEWAY_MAX_DRAINS an abandoned stream is cut and charged its reservation at once', async () => {
      const tight = await startGateway(engine, { besides: gw, env: { GATEWAY_MAX_DRAINS: '1' } });
      try {
        const first = newActor();
        const second = newActor();
        await readThenLeave(await tight.client(callerHeaders(first)).chat.completions.create(streamOf('[stall-after=1]')), 2);
        await eventually(() => tight.drains.active === 1, 'the one drain slot is taken');
        await readThenLeave(await tight.client(callerHeaders(second)).chat.completions.create(streamOf('[stall-after=1]')), 2);
        await eventually(async () => (await tight.ledger(second)).length === 1, 'the second is charged without a drain');
        assert.equal((await tight.ledger(second))[0]?.basis, 'reservation');
        assert.equal(tight.drains.active, 1);
        tight.clock.advance(tight.config.drainTimeoutMs);
        await eventually(async () => (await tight.ledger(first)).length === 1, 'the first is charged at its deadline');
      } finally {
        await tight.close();
      }
    });

    test('an upstream that stalls mid-stream ends the stream with an error event and nothing is charged', async () => {
      const actor = newActor();
      const stream = await gw.client(callerHeaders(actor)).chat.completions.create(streamOf('[stall-after=2]'));
      const iterator = stream[Symbol.asyncIterator]();
      for (let i = 0; i < 3; i++) await iterator.next();
      const next = iterator.next();
      gw.clock.advance(gw.config.upstreamTimeoutMs);
      await assert.rejects(next, (error: unknown) => error instanceof OpenAI.APIError && /stopped sending mid-stream/.test(error.message));
      await eventually(async () => (await gw.spend(actor)).reserved === 0n, 'the reservation is released');
      assert.deepEqual(await gw.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
    });

    test("an upstream error event reaches the client as the SDK's error and nothing is charged", async () => {
      const actor = newActor();
      const stream = await gw.client(callerHeaders(actor)).chat.completions.create(streamOf('[error-event]'));
      await assert.rejects(
        (async () => {
          for await (const _chunk of stream);
        })(),
        (error: unknown) => error instanceof OpenAI.APIError && /upstream failed mid-stream/.test(error.message),
      );
      await eventually(async () => (await gw.spend(actor)).reserved === 0n, 'released');
      assert.equal((await gw.ledger(actor)).length, 0);
    });

    test('a stream that completes without any usage is charged its reservation (the gateway never estimates)', async () => {
      const actor = newActor();
      const stream = await gw.client(callerHeaders(actor)).chat.completions.create(streamOf('[no-usage]'));
      for await (const _chunk of stream);
      const [row] = await gw.ledger(actor);
      assert.equal(row?.basis, 'reservation');
    });
  });
}
