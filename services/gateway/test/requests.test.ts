import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import OpenAI from 'openai';
import { callerHeaders, type Gateway, gatewayToken, models, newActor, startGateway } from './harness.ts';

const body = { model: models.small, messages: [{ role: 'user' as const, content: 'hello' }] };

for (const engine of testEngines()) {
  describe(`request checks on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    test('the gateway bearer is required and compared exactly; errors are in the OpenAI shape', async () => {
      const headers = callerHeaders(newActor());
      const missing = await gw.http('POST', '/v1/chat/completions', { headers, body, bearer: null });
      assert.equal(missing.status, 401);
      assert.deepEqual(Object.keys(missing.json.error).sort(), ['code', 'message', 'param', 'type']);
      assert.deepEqual([missing.json.error.type, missing.json.error.code], ['authentication_error', 'unauthorized']);
      for (const bearer of [`${gatewayToken}x`, gatewayToken.slice(0, -1), 'nope']) {
        const wrong = await gw.http('POST', '/v1/chat/completions', { headers, body, bearer });
        assert.equal(wrong.status, 401, bearer);
      }
      const error = await gw
        .client(headers, 'wrong-key')
        .chat.completions.create(body)
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof OpenAI.AuthenticationError);
      assert.equal(gw.upstream.received.length, 0, 'nothing reached the upstream');
    });

    test('health and root are public; unknown /v1 routes are a 404 in the OpenAI shape', async () => {
      const health = await gw.http('GET', '/healthz', { bearer: null });
      assert.deepEqual([health.status, health.json.data.status, health.json.data.db], [200, 'ok', true]);
      assert.equal((await gw.http('GET', '/', { bearer: null })).json.data.service, 'gateway');
      const unknown = await gw.http('GET', '/v1/completions');
      assert.deepEqual([unknown.status, unknown.json.error.code], [404, 'not_found']);
    });

    test('missing or malformed platform headers are a 400 naming the header, before anything is reserved or sent', async () => {
      const actor = newActor();
      const cases: Array<[Record<string, string>, string, string]> = [
        [{ 'x-platform-slot': 'compiler' }, 'x-platform-actor-did', 'missing_header'],
        [{ 'x-platform-actor-did': 'alice', 'x-platform-slot': 'compiler' }, 'x-platform-actor-did', 'invalid_header'],
        [{ 'x-platform-actor-did': `did:x:${'a'.repeat(300)}`, 'x-platform-slot': 'compiler' }, 'x-platform-actor-did', 'invalid_header'],
        [{ 'x-platform-actor-did': actor }, 'x-platform-slot', 'missing_header'],
        [{ 'x-platform-actor-did': actor, 'x-platform-slot': 'Compiler' }, 'x-platform-slot', 'invalid_header'],
        [{ 'x-platform-actor-did': actor, 'x-platform-slot': 'reviewer' }, 'x-platform-slot', 'invalid_header'],
        [callerHeaders(actor, 'compiler', { 'x-platform-intent-id': 'x'.repeat(129) }), 'x-platform-intent-id', 'invalid_header'],
        [callerHeaders(actor, 'compiler', { 'x-platform-goal-id': 'has space' }), 'x-platform-goal-id', 'invalid_header'],
        [callerHeaders(actor, 'compiler', { 'x-platform-kind-route': 'é' }), 'x-platform-kind-route', 'invalid_header'],
        [callerHeaders(actor, 'compiler', { 'x-platform-byo-api-key': 'yes' }), 'x-platform-byo-api-key', 'invalid_header'],
        [callerHeaders(actor, 'compiler', { 'x-platform-byo-api-key': 'true' }), 'x-platform-user-api-key', 'missing_header'],
        [callerHeaders(actor, 'compiler', { 'x-platform-user-api-key': 'sk-mine' }), 'x-platform-user-api-key', 'invalid_header'],
      ];
      for (const [headers, param, code] of cases) {
        const response = await gw.http('POST', '/v1/chat/completions', { headers, body });
        assert.equal(response.status, 400, `${param}: ${response.text}`);
        assert.deepEqual([response.json.error.param, response.json.error.code, response.json.error.type], [param, code, 'invalid_request_error']);
        assert.match(response.json.error.message, new RegExp(param));
      }
      const viaSdk = await gw
        .client({ 'x-platform-actor-did': actor })
        .chat.completions.create(body)
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      assert.ok(viaSdk instanceof OpenAI.BadRequestError);
      assert.equal(viaSdk.param, 'x-platform-slot');
      assert.equal(gw.upstream.received.length, 0);
      assert.deepEqual(await gw.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
    });

    test('a wallet actor is one ledger key whatever its letter case', async () => {
      const wallet = '0xAbCdEf0123456789aBcDeF0123456789ABCDEF01';
      await gw.client(callerHeaders(wallet)).chat.completions.create(body);
      await gw.client(callerHeaders(wallet.toLowerCase())).chat.completions.create(body);
      assert.equal((await gw.spend(wallet.toLowerCase())).calls, 2);
    });

    test('bodies are checked where the gateway reads them: bad fields, bad JSON, other media types and oversized bodies never leave', async () => {
      const headers = callerHeaders(newActor());
      const forwarded = gw.upstream.received.length;
      const bad: Array<[unknown, string]> = [
        [{ messages: body.messages }, 'model'],
        [{ model: models.small }, 'messages'],
        [{ model: models.small, messages: [] }, 'messages'],
        [{ ...body, max_tokens: 0 }, 'max_tokens'],
        [{ ...body, max_tokens: '10' }, 'max_tokens'],
        [{ ...body, stream: 'yes' }, 'stream'],
        [{ ...body, n: 17 }, 'n'],
      ];
      for (const [payload, param] of bad) {
        const response = await gw.http('POST', '/v1/chat/completions', { headers, body: payload });
        assert.equal(response.status, 400, JSON.stringify(payload));
        assert.match(`${response.json.error.param} ${response.json.error.message}`, new RegExp(param));
      }
      const notJson = await gw.http('POST', '/v1/chat/completions', { headers, body: '{"model":', bearer: gatewayToken });
      assert.deepEqual([notJson.status, notJson.json.error.code], [400, 'invalid_json']);
      const text = await gw.http('POST', '/v1/chat/completions', { headers: { ...headers, 'content-type': 'text/plain' }, body: 'hi' });
      assert.deepEqual([text.status, text.json.error.code], [415, 'unsupported_media_type']);
      const huge = await gw.http('POST', '/v1/chat/completions', { headers, body: { ...body, padding: 'x'.repeat(gw.config.maxBodyBytes) } });
      assert.deepEqual([huge.status, huge.json.error.code], [413, 'payload_too_large']);
      assert.equal(gw.upstream.received.length, forwarded);
    });
  });
}
