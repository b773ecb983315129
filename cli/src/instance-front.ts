import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { failure } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import type { StartedService } from '@platform/kit/lifecycle';

const maxBodyBytes = 16 * 1024 * 1024;

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
    // Held whole so that it can go to another instance; far above any service's own body limit.
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBodyBytes) chunks.push(chunk);
    });
    incoming.on('end', () => {
      if (size > maxBodyBytes) return refuse(outgoing, 'payload_too_large', `request body over ${maxBodyBytes} bytes`);
      const order = instances.map((_, index) => (preferred + index) % instances.length);
      relay(incoming, Buffer.concat(chunks), outgoing, order, (index) => {
        preferred = index;
      });
    });
  });

  const relay = (incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse, order: number[], answered: (index: number) => void) => {
    const [index, ...rest] = order;
    if (index === undefined) return refuse(outgoing, 'unavailable', `no ${name} instance answered`);
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
      refuse(outgoing, 'unavailable', `${name} instance failed: ${error.code ?? error.message}`);
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

/** The kit's failure envelope, as the instances would have answered. */
function refuse(outgoing: ServerResponse, code: 'payload_too_large' | 'unavailable', message: string): void {
  const error = new ServiceError(code, message);
  outgoing
    .writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', ...(error.retryable ? { 'retry-after': '1' } : {}) })
    .end(JSON.stringify(failure(error)));
}
