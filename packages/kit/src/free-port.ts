import { randomInt } from 'node:crypto';
import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A port handed out is listened on seconds later (a platform's router after its other services; a node started
 * once the services that plan its address are told it). Two things used to take it meanwhile on a busy machine:
 * - the kernel, which picks `listen(0)` ports and the local ends of outgoing connections in its ephemeral range
 *   (Linux: 32768–60999), where `listen(0)` found this one: so ports are taken below that range;
 * - another caller of this function, in this process or another, drawing the same port: so each port handed out is
 *   claimed for a minute, machine-wide, by a file named after it in the system's temporary folder.
 */
const firstPort = 20_000;
const lastPort = 32_767;
const attempts = 50;
const claimMs = 60_000;
const claimsDir = join(tmpdir(), 'platform-free-ports');
/** Made once per process, on the first claim. */
let claimsDirMade = false;

/**
 * A loopback port nothing listens on right now and no other caller was given in the last minute, for a process that
 * must be told its port before it starts (a daemon the router launches, a service in a test). Another program could
 * still take it in between; callers treat a failed listen as a failed start.
 *
 * @example const port = await freePort(); spawn(node, [entry], { env: { PORT: String(port) } })
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = randomInt(firstPort, lastPort + 1);
    if (!claim(port)) continue;
    if ((await listenAndClose(host, port)) !== undefined) return port;
  }
  // Every try was taken (a machine that hands those ports out itself): let the kernel pick.
  return (await listenAndClose(host, 0)) as number;
}

/**
 * Claims `port` for a minute: false when another caller claimed it less than a minute ago. A folder that cannot be
 * written leaves the listen check alone to decide.
 */
function claim(port: number): boolean {
  const file = join(claimsDir, String(port));
  try {
    if (!claimsDirMade) {
      mkdirSync(claimsDir, { recursive: true });
      claimsDirMade = true;
    }
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return true;
  }
  try {
    if (Date.now() - statSync(file).mtimeMs < claimMs) return false;
    // An old claim: its port has been listened on or given up since. Renewed for this caller.
    const now = new Date();
    utimesSync(file, now, now);
    return true;
  } catch {
    return true;
  }
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
