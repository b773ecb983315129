import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import OpenAI, { type APIError } from 'openai';
import { callerHeaders, type Gateway, models, newActor, startGateway, upstreamKey } from './harness.ts';

const hello = [{ role: 'user' as const, content: 'hello' }];
const byo = (key: string) => ({ 'x-platform-byo-api-key': 'true', 'x-platform-user-api-key': key });

async function failure(promise: Promise<unknown>): Promise<APIError> {
  const outcome = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  assert.ok(outcome instanceof OpenAI.APIError, `expected an API error, got ${String(outcome)}`);
  return outcome;
}

for (const engine of testEngines()) {
  describe(`settings and modes on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    test('kill switch: every path answers 503, /healthz included, and nothing is forwarded', async () => {
      const off = await startGateway(engine, { besides: gw, env: { PLATFORM_GATEWAY_DISABLED: 'true' } });
      try {
        const forwarded = gw.upstream.received.length;
        for (const [method, path] of [
          ['GET', '/healthz'],
          ['GET', '/'],
          ['GET', '/v1/models'],
          ['GET', '/v1/admin/spend'],
          ['GET', '/nowhere'],
        ] as const) {
          const response = await off.http(method, path, { bearer: null });
          assert.deepEqual([response.status, response.json?.error?.code], [503, 'gateway_disabled'], `${method} ${path}`);
        }
        const error = await failure(off.client(callerHeaders(newActor())).chat.completions.create({ model: models.small, messages: hello }));
        assert.equal(error.status, 503);
        assert.match(error.message, /PLATFORM_GATEWAY_DISABLED/);
        assert.equal(gw.upstream.received.length, forwarded);
      } finally {
        await off.close();
      }
    });

    test('BYO: the caller key goes upstream, the whitelist is bypassed, nothing is metered', async () => {
      const actor = newActor();
      const client = gw.client(callerHeaders(actor, 'compiler', byo('sk-user-own-key')));
      const { data, response } = await client.chat.completions.create({ model: models.offList, messages: hello }).withResponse();
      assert.equal(data.object, 'chat.completion');
      assert.equal(gw.upstream.received.at(-1)?.headers.authorization, 'Bearer sk-user-own-key');
      assert.equal(response.headers.get('x-platform-cost-credit'), null);
      // Not priced at all: BYO needs no rate card entry either.
      await client.chat.completions.create({ model: models.unpriced, messages: hello });
      await client.embeddings.create({ model: models.unpriced, input: 'x' });
      const stream = await client.chat.completions.create({ model: models.offList, messages: hello, stream: true });
      for await (const _chunk of stream);
      assert.equal(gw.upstream.received.at(-1)?.body.stream_options, undefined, 'a BYO stream is sent as the client wrote it');
      assert.deepEqual(await gw.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
      assert.equal((await gw.ledger(actor)).length, 0);
    });

    test('BYO: a client that leaves mid-stream is simply cut (nothing to meter)', async () => {
      const { streamsCut } = gw.upstream.counts();
      const stream = await gw.client(callerHeaders(newActor(), 'planner', byo('sk-user'))).chat.completions.create({
        model: models.offList,
        stream: true,
        messages: [{ role: 'user', content: '[stall-after=1]' }],
      });
      for await (const _chunk of stream) break;
      await eventually(() => gw.upstream.counts().streamsCut === streamsCut + 1, 'the upstream stream is dropped');
      assert.equal(gw.drains.active, 0);
    });

    test('the planner and executor pins leave the slot one model; other slots keep their whitelist', async () => {
      const pinned = await startGateway(engine, { besides: gw, env: { PLATFORM_PLANNER_MODEL: 'M3', PLATFORM_EXECUTOR_MODEL: models.executor } });
      try {
        const actor = newActor();
        const planner = pinned.client(callerHeaders(actor, 'planner'));
        await planner.chat.completions.create({ model: models.coder, messages: hello });
        for (const model of [models.small, models.large]) {
          const error = await failure(planner.chat.completions.create({ model, messages: hello }));
          assert.deepEqual([error.status, error.code], [403, 'model_not_whitelisted']);
          assert.match(error.message, /pinned to accounts\/test\/models\/coder \(PLATFORM_PLANNER_MODEL\)/);
        }
        const executor = pinned.client(callerHeaders(actor, 'executor'));
        await executor.chat.completions.create({ model: models.executor, messages: hello });
        assert.equal((await failure(executor.chat.completions.create({ model: models.coder, messages: hello }))).status, 403);
        await pinned.client(callerHeaders(actor, 'compiler')).chat.completions.create({ model: models.large, messages: hello });
        // BYO is not bound by the pin.
        await pinned.client(callerHeaders(actor, 'planner', byo('sk-user'))).chat.completions.create({ model: models.small, messages: hello });
        const listed = await pinned.http('GET', '/v1/models', { headers: { 'x-platform-slot': 'planner' } });
        assert.deepEqual(
          listed.json.data.map((model: { id: string }) => model.id),
          [models.coder],
        );
      } finally {
        await pinned.close();
      }
    });

    test('a whitelisted model the rate card does not price is refused with 400 model_not_priced, never forwarded at 0', async () => {
      const unpriced = await startGateway(engine, { besides: gw, env: { GATEWAY_MODEL_M4: models.unpriced } });
      try {
        const actor = newActor();
        const forwarded = gw.upstream.received.length;
        const error = await failure(unpriced.client(callerHeaders(actor, 'executor')).chat.completions.create({ model: models.unpriced, messages: hello }));
        assert.deepEqual([error.status, error.code, error.param], [400, 'model_not_priced', 'model']);
        assert.match(error.message, /no price in rate card v1/);
        assert.equal(gw.upstream.received.length, forwarded);
        assert.deepEqual(await unpriced.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
      } finally {
        await unpriced.close();
      }
    });

    test('GATEWAY_UPSTREAM_MODEL_ID=short sends only the model segment; the ledger keeps the full id', async () => {
      const short = await startGateway(engine, { besides: gw, env: { GATEWAY_UPSTREAM_MODEL_ID: 'short' } });
      try {
        const actor = newActor();
        await short.client(callerHeaders(actor)).chat.completions.create({ model: models.small, messages: hello });
        const sent = gw.upstream.received.at(-1);
        assert.equal(sent?.body.model, 'small');
        assert.equal(sent?.headers.authorization, `Bearer ${upstreamKey}`);
        assert.equal((await short.ledger(actor))[0]?.model, models.small);
      } finally {
        await short.close();
      }
    });
  });
}
