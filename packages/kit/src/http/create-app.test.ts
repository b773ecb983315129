import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { pino } from 'pino';
import { createServiceApp } from './create-app.ts';

/** A plain TCP connection to the app, for requests no HTTP client would send, and everything it received. */
async function rawConnection(port: number) {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString();
  });
  return { socket, received: () => received };
}

test('a request that arrives while the service drains gets 503 unavailable in the envelope; the one in flight finishes', async () => {
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
  const release = Promise.withResolvers<void>();
  const arrived = Promise.withResolvers<void>();
  app.get('/slow', async () => {
    arrived.resolve();
    await release.promise;
    return { ok: true, data: 'done' };
  });
  app.get('/fast', async () => ({ ok: true, data: 'fast' }));
  // Runs after the kit's own preClose hook: from here on the service is draining.
  const draining = Promise.withResolvers<void>();
  app.addHook('preClose', async () => draining.resolve());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };

  // A second request on the kept-alive connection of one still in flight, sent once the service drains.
  const { socket, received } = await rawConnection(port);
  socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
  await arrived.promise;
  const closed = app.close();
  await draining.promise;
  // Past the kit's hook, Fastify closes the listener (and reaps idle connections); ours carries a request, so it stays.
  while (app.server.listening) await new Promise((resolve) => setImmediate(resolve));
  socket.write('GET /fast HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
  release.resolve();
  await once(socket, 'close');
  await closed;

  const [first, second] = received().split(/(?=HTTP\/1\.1 )/);
  assert.match(first ?? '', /^HTTP\/1\.1 200 /);
  assert.match(first ?? '', /"data":"done"/);
  assert.match(second ?? '', /^HTTP\/1\.1 503 /);
  assert.match(second ?? '', /\r\nconnection: close\r\n/i);
  const body = JSON.parse((second ?? '').split('\r\n\r\n')[1] ?? '');
  assert.deepEqual(body, { ok: false, error: { code: 'unavailable', message: 'the service is shutting down; retry the request', retryable: true } });
});

function echoApp(options: Partial<Parameters<typeof createServiceApp>[0]> = {}) {
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 64 * 1024, api: { title: 'test', version: '0.0.0' }, ...options });
  const seen: unknown[] = [];
  app.post(
    '/items/:id',
    {
      schema: {
        params: { type: 'object', properties: { id: { type: 'string', maxLength: 256 } } },
        querystring: { type: 'object', properties: { tag: { type: 'string' } } },
        body: { type: 'object', additionalProperties: true },
        response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } },
      },
    },
    async (request) => {
      seen.push(request.body);
      return { ok: true };
    },
  );
  return { app, seen };
}

test('NUL and lone surrogates in a body, a query or a path parameter are 400 invalid_request naming the field; the handler never runs', async () => {
  const { app, seen } = echoApp();
  const post = (url: string, payload: string) => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
  const cases: Array<[string, string, string, string]> = [
    ['/items/1', '{"idempotency_key":"a\\u0000b"}', 'idempotency_key', 'idempotency_key must not contain NUL (U+0000)'],
    ['/items/1', '{"args":{"list":["ok","\\ud800"]}}', 'args.list[1]', 'args.list[1] must be well-formed Unicode (it holds a lone surrogate)'],
    ['/items/1?tag=%00', '{}', 'tag', 'query parameter tag must not contain NUL (U+0000)'],
    ['/items/a%00b', '{}', 'id', 'path parameter id must not contain NUL (U+0000)'],
  ];
  for (const [url, payload, field, message] of cases) {
    const answer = await post(url, payload);
    assert.equal(answer.statusCode, 400, `${url} ${payload}`);
    assert.deepEqual(answer.json(), { ok: false, error: { code: 'invalid_request', message, retryable: false, field } });
  }
  assert.deepEqual(seen, []);
  const fine = await post('/items/1?tag=t', '{"emoji":"\\ud83d\\ude00","text":"ü"}');
  assert.equal(fine.statusCode, 200);
  assert.deepEqual(seen, [{ emoji: '😀', text: 'ü' }]);
});

test('a body sent to a route that declares none is 400; to no route at all, 404; an empty object is no body', async () => {
  const { app } = echoApp();
  app.post('/bare', { schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({ ok: true }));
  const send = (url: string, payload: string) => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
  const refused = await send('/bare', '{"reason":"x"}');
  assert.equal(refused.statusCode, 400);
  assert.equal(refused.json().error.message, 'POST /bare takes no request body');
  assert.equal((await send('/bare', '{}')).statusCode, 200);
  assert.equal((await send('/bare', '')).statusCode, 200);
  assert.equal((await send('/nowhere', '{"reason":"x\\u0000"}')).statusCode, 404);
});

test('a body nested past the limit is 400 in the envelope, not a stack overflow', async () => {
  const { app, seen } = echoApp();
  const payload = `{"manifest":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
  const answer = await app.inject({ method: 'POST', url: '/items/1', headers: { 'content-type': 'application/json' }, payload });
  assert.equal(answer.statusCode, 400);
  assert.equal(answer.json().error.message, 'the body is nested deeper than 64 levels');
  assert.deepEqual(seen, []);
});

test('a path that is not valid percent-encoding, or a path parameter past the router limit, is answered in the envelope', async () => {
  const { app } = echoApp();
  const badUrl = await app.inject({ method: 'POST', url: '/items/%ff', headers: { 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(badUrl.statusCode, 400);
  assert.deepEqual(badUrl.json(), { ok: false, error: { code: 'invalid_request', message: 'the path is not valid percent-encoded UTF-8', retryable: false } });
  // The route's own limit (256) is the one it documents; the router's (1,024) only stops what no route could take.
  const atLimit = await app.inject({ method: 'POST', url: `/items/${'x'.repeat(256)}`, payload: {} });
  assert.equal(atLimit.statusCode, 200);
  const pastSchema = await app.inject({ method: 'POST', url: `/items/${'x'.repeat(257)}`, payload: {} });
  assert.equal(pastSchema.statusCode, 400);
  assert.match(pastSchema.json().error.message, /params\/id must NOT have more than 256 characters/);
  const pastRouter = await app.inject({ method: 'POST', url: `/items/${'x'.repeat(1025)}`, payload: {} });
  assert.equal(pastRouter.statusCode, 400);
  assert.deepEqual(pastRouter.json(), {
    ok: false,
    error: { code: 'invalid_request', message: 'a path parameter is longer than 1024 characters', retryable: false },
  });
});

test('a scope that renders its own failures names its envelope for the failures found before routing', async () => {
  const openAi = { render: (error: { code: string; message: string }) => ({ error: { message: error.message, code: error.code } }), schema: {} };
  const { app } = echoApp({ failureEnvelopeAt: (url) => (url.startsWith('/v1/') ? openAi : undefined) });
  const scoped = await app.inject({ method: 'GET', url: '/v1/%ff' });
  assert.deepEqual(scoped.json(), { error: { message: 'the path is not valid percent-encoded UTF-8', code: 'invalid_request' } });
  const root = await app.inject({ method: 'GET', url: '/x/%ff' });
  assert.equal(root.json().ok, false);
});

test('a request that is not valid HTTP gets the envelope before the connection closes', async () => {
  const { app } = echoApp();
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const { socket, received } = await rawConnection(port);
  socket.write('GET /items HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
  await once(socket, 'close');
  await app.close();
  assert.match(received(), /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.deepEqual(JSON.parse(received().split('\r\n\r\n')[1] ?? ''), {
    ok: false,
    error: { code: 'invalid_request', message: 'the request is not valid HTTP', retryable: false },
  });
});
