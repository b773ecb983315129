import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * Ports handed out below the kernel's ephemeral range (Linux: 32768–60999). A port the kernel picked for `listen(0)`
 * or for an outgoing connection's own end is picked again by the kernel for the next one, so a port taken from that
 * range and bound seconds later (a node started after a platform's other services) was, on a busy machine, sometimes
 * already someone's: a listener started by a test next door, or the local end of a connection. Below the range only
 * another caller of this function competes, at random over thousands of ports.
 */
const firstPort = 20_000;
const lastPort = 32_767;
const attempts = 20;

/**
 * A loopback port nothing listens on right now, for a process that must be told its port before it starts (a daemon
 * the router launches, a service in a test). Another process could take it in between; callers treat a failed
 * listen as a failed start and try again.
 *
 * @example const port = await freePort(); spawn(node, [entry], { env: { PORT: String(port) } })
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = await listenAndClose(host, randomInt(firstPort, lastPort + 1));
    if (port !== undefined) return port;
  }
  // Every try was taken (a machine that hands those ports out itself): let the kernel pick.
  return (await listenAndClose(host, 0)) as number;
}

/** The port `host:port` could be listened on (and is closed again), or undefined when it is in use. */
async function listenAndClose(host: string, port: number): Promise<number | undefined> {
  const server = createServer();
  const listened = await new Promise<boolean>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(false) : reject(error)));
    server.listen({ port, host, exclusive: true }, () => resolve(true));
  });
  if (!listened) return undefined;
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}
