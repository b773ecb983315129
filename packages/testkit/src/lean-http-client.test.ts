import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { LeanHttpClient } from './lean-http-client.ts';

describe('LeanHttpClient', () => {
  let server: http.Server;
  let origin: URL;
  const connections = new Set<unknown>();
  const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];

  before(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() });
        const status = request.url === '/refuse' ? 409 : 200;
        const body = JSON.stringify({ ok: status === 200, echo: Buffer.concat(chunks).toString() });
        response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        response.end(body);
      });
    });
    server.on('connection', (socket) => connections.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('posts JSON with its headers, answers status and body, and keeps at most maxSockets connections open', async () => {
    const client = new LeanHttpClient(origin, { maxSockets: 2 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => client.post('/v1/pay', JSON.stringify({ n: i, text: 'é' }), { 'x-ledger-agent': 't' }, true)),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array(10).fill(200),
      );
      assert.deepEqual(JSON.parse(answers[3]?.body ?? '').echo, JSON.stringify({ n: 3, text: 'é' }));
      assert.equal(connections.size, 2);
      const request = seen.at(-1);
      assert.equal(request?.method, 'POST');
      assert.equal(request?.headers['content-type'], 'application/json');
      assert.equal(request?.headers['x-ledger-agent'], 't');
      const refused = await client.post('/refuse', '{}');
      assert.equal(refused.status, 409);
      assert.match(refused.body ?? '', /"ok":false/);
      assert.equal((await client.post('/v1/pay', '{}')).body, undefined, 'a 200 body is skipped unless asked for');
    } finally {
      client.close();
    }
  });

  it('fails a request whose connection is refused, with the socket error code', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = new LeanHttpClient(new URL(`http://127.0.0.1:${port}`), { maxSockets: 1 });
    await assert.rejects(client.post('/x', '{}'), /ECONNREFUSED/);
    client.close();
  });
});
