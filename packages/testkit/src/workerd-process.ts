import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@platform/kit/free-port';
import { eventually } from './eventually.ts';

/** The workerd binary of the npm package `workerd` (its platform package's). */
export const workerdBinary: string = (createRequire(import.meta.url)('workerd') as { default: string }).default;

/**
 * A workerd process for a test or a bench: the files (a `config.capnp` and what it embeds) written to a temporary
 * folder, the config given its loopback port, started with `--experimental`, and resolved once anything answers
 * HTTP on the port. `stop` kills it and removes the folder.
 *
 * @example const peer = await startWorkerd({ 'worker.js': source }, (port) => configServing('worker.js', port))
 */
export async function startWorkerd(files: Record<string, string>, config: (port: number) => string, env: Record<string, string> = {}) {
  const folder = await mkdtemp(join(tmpdir(), 'workerd-'));
  const port = await freePort();
  for (const [name, text] of Object.entries(files)) await writeFile(join(folder, name), text);
  await writeFile(join(folder, 'config.capnp'), config(port));
  const child: ChildProcess = spawn(workerdBinary, ['serve', join(folder, 'config.capnp'), '--experimental'], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`workerd exited: ${output}`);
      return fetch(url).then(
        () => true,
        () => false,
      );
    },
    () => `workerd listening on ${url} (${output})`,
  );
  return {
    url,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/** A config serving one ES module Worker directly on the port (nodejs_compat, the public and local network). */
export function configServing(module: string, port: number): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .main) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const main :Workerd.Worker = (
  modules = [ (name = "${module}", esModule = embed "${module}") ],
  compatibilityDate = "2026-11-17",
  compatibilityFlags = ["nodejs_compat"],
);
`;
}
