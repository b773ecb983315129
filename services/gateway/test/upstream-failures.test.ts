import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import OpenAI from 'openai';
import { callerHeaders, type Gateway, models, newActor, startGateway } from './harness.ts';

const ask = (content: string, stream = false) => ({ model: models.small, messages: [{ role: 'user' as const, content }], ...(stream ? { stream } : {}) });

/** A URL on which nothing listens any more: connecting is refused. */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

for (const engine of testEngines()) {
  describe(`upstream failures on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    for (const stream of [false, true]) {
      test(`an upstream that does not answer in time is a 504 and nothing is debited (${stream ? 'stream' : 'whole'})`, async () => {
        const actor = newActor();
        const arrived = gw.upstream.received.length + 1;
        const pending = gw
          .client(callerHeaders(actor))
          .chat.completions.create(ask('[hang]', stream))
          .then(
            () => undefined,
            (caught: unknown) => caught,
          );
        await gw.upstream.waitFor(arrived);
        assert.ok((await gw.spend(actor)).reserved > 0n, 'the reservation is held while the upstream works');
        gw.clock.advance(gw.config.upstreamTimeoutMs);
        const error = await pending;
        assert.ok(error instanceof OpenAI.APIError);
        assert.deepEqual([error.status, error.code, error.type], [504, 'upstream_timeout', 'upstream_error']);
        assert.match(error.message, /did not answer within 30000 ms/);
        assert.deepEqual(await gw.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
      });
    }

    test('an upstream that refuses the connection is a 502 and nothing is debited', async () => {
      const refused = await startGateway(engine, { besides: gw, env: { GATEWAY_UPSTREAM_URL: await refusedUrl() } });
      try {
        const actor = newActor();
        for (const stream of [false, true]) {
          const error = await refused
            .client(callerHeaders(actor))
            .chat.completions.create(ask('hi', stream))
            .then(
              () => undefined,
              (caught: unknown) => caught,
            );
          assert.ok(error instanceof OpenAI.APIError);
          assert.deepEqual([error.status, error.code], [502, 'upstream_unreachable']);
          assert.match(error.message, /ECONNREFUSED/);
        }
        assert.deepEqual(await refused.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
      } finally {
        await refused.close();
      }
    });

    test('with no upstream configured the gateway still starts, and calls get a 503 naming the setting', async () => {
      const bare = await startGateway(engine, { besides: gw, env: { GATEWAY_UPSTREAM_URL: '' } });
      try {
        const actor = newActor();
        assert.equal((await bare.http('GET', '/healthz', { bearer: null })).status, 200);
        const error = await bare
          .client(callerHeaders(actor))
          .chat.completions.create(ask('hi'))
          .then(
            () => undefined,
            (caught: unknown) => caught,
          );
        assert.ok(error instanceof OpenAI.APIError);
        assert.deepEqual([error.status, error.code], [503, 'upstream_not_configured']);
        assert.match(error.message, /GATEWAY_UPSTREAM_URL/);
        const embedding = await bare.http('POST', '/v1/embeddings', { headers: callerHeaders(actor), body: { model: models.embed, input: 'x' } });
        assert.deepEqual([embedding.status, embedding.json.error.code], [503, 'upstream_not_configured']);
        assert.equal(embedding.headers.get('x-should-retry'), 'false');
        assert.deepEqual(await bare.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
      } finally {
        await bare.close();
      }
    });
  });
}
