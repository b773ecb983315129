import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on right now, for a process that must be told its port before it starts (a daemon
 * the router launches, a service in a test). Another process could take it in between; callers treat a failed
 * listen as a failed start and try again.
 *
 * @example const port = await freePort(); spawn(node, [entry], { env: { PORT: String(port) } })
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
