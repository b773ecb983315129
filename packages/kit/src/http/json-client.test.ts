import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createJsonClient, JsonClientError } from './json-client.ts';

describe('the keep-alive JSON client', () => {
  let base: string;
  let close: () => Promise<void>;
  before(async () => {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/echo') {
          response.writeHead(201, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({ method: request.method, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'), auth: request.headers.authorization }),
          );
        } else if (request.url === '/text') response.end('not json');
        else if (request.url === '/big') response.end('x'.repeat(2048));
        // '/hang' never answers.
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
  });
  after(async () => close());

  test('sends JSON with headers and reads the status, headers and parsed answer', async () => {
    const client = createJsonClient({ maxSockets: 4, timeoutMs: 2_000 });
    const answer = await client.request('POST', `${base}/echo`, { body: { a: 1 }, headers: { authorization: 'Bearer t' } });
    assert.equal(answer.status, 201);
    assert.deepEqual(answer.json, { method: 'POST', body: { a: 1 }, auth: 'Bearer t' });
    const signed = await client.request('POST', `${base}/echo`, { bodyText: '{"a":2}' });
    assert.deepEqual((signed.json as { body: unknown }).body, { a: 2 }, 'bodyText is sent as it is');
    const text = await client.request('GET', `${base}/text`);
    assert.equal(text.json, undefined, 'an answer that is not JSON has no json');
    assert.equal(text.text, 'not json');
    await client.close();
  });

  test('a slow answer fails as a timeout, an unreachable host and an oversized answer as network errors', async () => {
    const client = createJsonClient({ maxSockets: 4, timeoutMs: 2_000, maxAnswerBytes: 1024 });
    await assert.rejects(
      client.request('GET', `${base}/hang`, { timeoutMs: 50 }),
      (error: unknown) => error instanceof JsonClientError && error.kind === 'timeout',
    );
    await assert.rejects(
      client.request('GET', `${base}/big`),
      (error: unknown) => error instanceof JsonClientError && error.kind === 'network' && /larger than 1024/.test(error.message),
    );
    await assert.rejects(client.request('GET', 'http://127.0.0.1:1/'), (error: unknown) => error instanceof JsonClientError && error.kind === 'network');
    await client.close();
  });
});
