import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { pino } from 'pino';
import { createServiceApp } from './create-app.ts';

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
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString();
  });
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

  const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
  assert.match(first ?? '', /^HTTP\/1\.1 200 /);
  assert.match(first ?? '', /"data":"done"/);
  assert.match(second ?? '', /^HTTP\/1\.1 503 /);
  assert.match(second ?? '', /\r\nconnection: close\r\n/i);
  const body = JSON.parse((second ?? '').split('\r\n\r\n')[1] ?? '');
  assert.deepEqual(body, { ok: false, error: { code: 'unavailable', message: 'the service is shutting down; retry the request', retryable: true } });
});
