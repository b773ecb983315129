import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';

/*
 * The floor for SSE fan-out: the least a Node process can do to send one event to every subscriber (one frame built
 * once, written to each response in a loop), serving the same frames the daemon sends. What the daemon adds beyond it
 * is the broker: ids, per-subscriber buffers, drop accounting, intent filtering.
 */

const subscribers = new Set<http.ServerResponse>();
let counter = 0;

const server = http.createServer((request, response) => {
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write('retry: 2000\n\n');
    subscribers.add(response);
    request.on('close', () => subscribers.delete(response));
    return;
  }
  const id = ++counter;
  const frame = `id: floor-${id}\nevent: say\ndata: ${JSON.stringify({ conversation_id: 'bench', seq: id, at: new Date().toISOString(), role: 'assistant', text: 'ok' })}\n\n`;
  for (const subscriber of subscribers) subscriber.write(frame);
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});

async function main(): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serveChild({ subscribers: () => subscribers.size }, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

export type FloorProcess = Child<{ subscribers: () => number }, { url: string }>;

export function startFloor(): Promise<FloorProcess> {
  return forkChild(fileURLToPath(import.meta.url), null);
}

if (import.meta.main) await main();
