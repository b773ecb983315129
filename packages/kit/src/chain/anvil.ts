import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { spawnBound } from '../bound-children.ts';

/** A development chain this process started, and how to stop it. */
export interface LocalNode {
  url: string;
  /** The node's process id. */
  pid: number;
  /** Settles when the process ends (how it ended), so a caller waiting for it to answer can stop waiting. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** The anvil binary of @foundry-rs/anvil's package for this platform (installed with it; nothing is downloaded). */
export function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return join(
    dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)),
    'bin',
    process.platform === 'win32' ? 'anvil.exe' : 'anvil',
  );
}

export interface AnvilOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  chainId: number;
  /** Keep the chain across restarts: loaded at start, written every 30 s and on exit. */
  stateFile?: string | undefined;
  binary?: string | undefined;
  logger: Logger;
}

/**
 * Starts anvil and resolves once it listens, with the URL it listens on. The node is bound to this process
 * (bound-children.ts): a Ctrl-C meant for this process's group leaves it running until `stop` (the services using it
 * stop first), and it never outlives this process.
 */
export function startAnvil(options: AnvilOptions): Promise<LocalNode> {
  const args = ['--host', options.host, '--port', String(options.port), '--chain-id', String(options.chainId)];
  if (options.stateFile) args.push('--state', options.stateFile, '--state-interval', '30');
  const child = spawnBound(options.binary ?? anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal === null ? `anvil exited with code ${code}` : `anvil was ended by ${signal}`)),
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const listening = /Listening on ([^\s]+)/.exec(output);
      if (!listening) return;
      child.stdout?.off('data', onData);
      // Drain so a chatty node never blocks on a full pipe.
      child.stdout?.resume();
      resolve({ url: `http://${listening[1]}`, pid: child.pid as number, exited, stop: () => stopChild(child) });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => options.logger.warn({ output: chunk.toString('utf8').slice(0, 2000) }, 'anvil wrote to stderr'));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`anvil exited with code ${code} before listening: ${output.slice(-500)}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    // SIGTERM lets anvil write its state file; a node that hangs is killed after 5 s.
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
