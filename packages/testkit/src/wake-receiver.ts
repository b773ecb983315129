import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWake {
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

type Behaviour = (wake: ReceivedWake) => { status: number } | 'hang';

/**
 * A real HTTP wake receiver for tests: records every POST, answers as `behaviour` says
 * (a status, or 'hang' to never answer), and lets a test await the n-th arrival.
 *
 * @example const receiver = await startWakeReceiver(); ...; await receiver.waitFor(1)
 */
export async function startWakeReceiver(initial: Behaviour = () => ({ status: 200 })) {
  const received: ReceivedWake[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let behaviour = initial;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const wake = { headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> };
      received.push(wake);
      for (const waiter of [...waiters]) if (received.length >= waiter.count) waiter.resolve();
      const answer = behaviour(wake);
      if (answer === 'hang') return;
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/internal/wake`,
    received,
    setBehaviour(next: Behaviour) {
      behaviour = next;
    },
    /** Resolves once `count` wakes have arrived in total. */
    waitFor(count: number): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type WakeReceiver = Awaited<ReturnType<typeof startWakeReceiver>>;
