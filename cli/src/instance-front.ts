import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StartedService } from '@platform/kit/lifecycle';

/**
 * One address in front of a scaled service's instances under `up --instances`, as deploy/Caddyfile is in production:
 * every other service is wired to it, so when an instance dies (settlement's sequencer, a scheduler) they reach the
 * others instead of calling the dead one. A request goes to the instance that answered last, and moves on to the
 * next only when nothing was done: its connection was refused (or a kept-alive one had already closed), or it
 * answered 503 (a settlement standby refuses writes with a retryable 503, as does a sequencer whose commit failed).
 * Anything else, streams included, is relayed as it comes.
 */
export async function startInstanceFront(name: string, instances: readonly StartedService[]): Promise<StartedService> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let preferred = 0;
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const order = instances.map((_, index) => (preferred + index) % instances.length);
      relay(incoming, Buffer.concat(chunks), outgoing, order, (index) => {
        preferred = index;
      });
    });
  });

  const relay = (incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse, order: number[], answered: (index: number) => void) => {
    const [index, ...rest] = order;
    if (index === undefined) return unavailable(outgoing, `no ${name} instance answered`);
    const target = new URL(incoming.url ?? '/', (instances[index] as StartedService).url);
    const upstream = request(target, { method: incoming.method, headers: { ...incoming.headers, host: target.host }, agent }, (answer) => {
      if (answer.statusCode === 503 && rest.length > 0) {
        answer.resume();
        return relay(incoming, body, outgoing, rest, answered);
      }
      answered(index);
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
      // A client that leaves (an event stream's reader) ends the instance's side too.
      outgoing.once('close', () => answer.destroy());
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      const neverReached = error.code === 'ECONNREFUSED' || (error.code === 'ECONNRESET' && upstream.reusedSocket);
      if (outgoing.headersSent) return void outgoing.destroy();
      if (neverReached) return relay(incoming, body, outgoing, rest, answered);
      unavailable(outgoing, `${name} instance failed: ${error.code ?? error.message}`);
    });
    upstream.end(body);
  };

  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    name,
    url,
    dataLocation: `forwards to ${instances.map((instance) => instance.name).join(', ')}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}

/** The kit's failure envelope: what the instances would have answered had one been there. */
function unavailable(outgoing: ServerResponse, message: string): void {
  outgoing
    .writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' })
    .end(JSON.stringify({ ok: false, error: { code: 'unavailable', message, retryable: true } }));
}
