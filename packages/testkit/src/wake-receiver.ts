import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Arrivals, listenOnFreePort } from './local-server.ts';

export interface ReceivedWake {
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

type Behaviour = (wake: ReceivedWake) => { status: number; body?: string } | 'hang';

/**
 * A real HTTP wake receiver for tests: records every POST, answers as `behaviour` says
 * (a status and a body, `{"ok":true}` unless given, or 'hang' to never answer), and lets a test await the n-th arrival.
 *
 * @example const receiver = await startWakeReceiver(); ...; await receiver.waitFor(1)
 */
export async function startWakeReceiver(initial: Behaviour = () => ({ status: 200 })) {
  const arrivals = new Arrivals<ReceivedWake>();
  let behaviour = initial;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const wake = { headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> };
      arrivals.push(wake);
      const answer = behaviour(wake);
      if (answer === 'hang') return;
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body ?? '{"ok":true}');
    });
  });
  const { port, close } = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}/internal/wake`,
    received: arrivals.received,
    setBehaviour(next: Behaviour) {
      behaviour = next;
    },
    /** Resolves once `count` wakes have arrived in total. */
    waitFor: (count: number) => arrivals.waitFor(count),
    close,
  };
}

export type WakeReceiver = Awaited<ReturnType<typeof startWakeReceiver>>;
