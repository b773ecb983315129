import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { startInstanceFront } from '../src/instance-front.ts';

/*
 * The front `up --instances` puts before a scaled service: it moves on from an instance that refused the connection or
 * answered 503, relays anything else as it came, holds a body whole only up to 16 MiB, and answers in the kit's
 * envelope when no instance could.
 */

const limit = 16 * 1024 * 1024;
const closers: (() => Promise<void>)[] = [];

/** An instance answering every request with `status` and a body naming it and the size it received. */
async function instance(name: string, status: number) {
  const server = createServer((request, response) => {
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
    });
    request.on('end', () => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ name, size })));
  });
  const { port, close } = await listenOnFreePort(server);
  closers.push(close);
  return { name, url: `http://127.0.0.1:${port}`, dataLocation: '', stop: async () => {} };
}

const dead = async (name: string) => ({ name, url: `http://127.0.0.1:${await freePort()}`, dataLocation: '', stop: async () => {} });

const fronts: { url: string; stop: () => Promise<void> }[] = [];
after(async () => {
  await Promise.all(fronts.map((front) => front.stop()));
  await Promise.all(closers.map((close) => close()));
});

async function front(instances: Awaited<ReturnType<typeof instance>>[]) {
  const started = await startInstanceFront('settlement', instances);
  fronts.push(started);
  return started.url;
}

test('a refused connection and a standby’s 503 are passed over; the answering instance’s reply is relayed', async () => {
  const url = await front([await dead('settlement-1'), await instance('settlement-2', 503), await instance('settlement-3', 201)]);
  const answer = await fetch(`${url}/v1/pay`, { method: 'POST', body: '{"amount":"1"}', headers: { 'content-type': 'application/json' } });
  assert.equal(answer.status, 201);
  assert.deepEqual(await answer.json(), { name: 'settlement-3', size: 14 });
});

test('a 4xx is an answer, not a reason to try another instance', async () => {
  const url = await front([await instance('settlement-1', 409), await instance('settlement-2', 200)]);
  const answer = await fetch(`${url}/v1/pay`, { method: 'POST', body: '{}' });
  assert.equal(answer.status, 409);
  assert.equal(((await answer.json()) as { name: string }).name, 'settlement-1');
});

test('no instance reachable is 503 unavailable in the kit’s envelope, retryable; the last one’s own 503 is relayed as it came', async () => {
  const url = await front([await dead('settlement-1'), await dead('settlement-2')]);
  const answer = await fetch(`${url}/v1/info`);
  assert.equal(answer.status, 503);
  assert.equal(answer.headers.get('retry-after'), '1');
  const body = (await answer.json()) as { ok: boolean; error: { code: string; retryable: boolean } };
  assert.deepEqual([body.ok, body.error.code, body.error.retryable], [false, 'unavailable', true]);

  const standbysOnly = await front([await dead('settlement-1'), await instance('settlement-2', 503)]);
  const relayed = await fetch(`${standbysOnly}/v1/pay`, { method: 'POST', body: '{}' });
  assert.equal(relayed.status, 503);
  assert.equal(((await relayed.json()) as { name: string }).name, 'settlement-2');
});

test('a body of exactly 16 MiB is relayed whole; one byte more is 413 payload_too_large', async () => {
  const url = await front([await instance('settlement-1', 200)]);
  const atLimit = await fetch(`${url}/v1/pay`, { method: 'POST', body: Buffer.alloc(limit, 0x20) });
  assert.deepEqual([atLimit.status, ((await atLimit.json()) as { size: number }).size], [200, limit]);
  const past = await fetch(`${url}/v1/pay`, { method: 'POST', body: Buffer.alloc(limit + 1, 0x20) });
  assert.equal(past.status, 413);
  const body = (await past.json()) as { ok: boolean; error: { code: string; retryable: boolean } };
  assert.deepEqual([body.ok, body.error.code, body.error.retryable], [false, 'payload_too_large', false]);
});
