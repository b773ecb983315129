import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inheritedChildEnv } from './child-env.ts';

/** A platform service running in a process of its own, as `npx platform serve <name>` starts it. */
export interface ServiceProcess {
  name: string;
  url: string;
  dataDir: string;
  process: ChildProcess;
  /** Every line the service printed (JSON logs), for assertions and for failure messages. */
  logs: string[];
  /** SIGTERM (graceful drain), then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once: a crash. */
  kill(): Promise<void>;
}

const cli = fileURLToPath(new URL('../../../cli/bin/platform.js', import.meta.url));
const running = new Set<ChildProcess>();
// A test that dies half way must not leave services running (and holding ports or files).
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts a service with `PORT=0` and its own temporary DATA_DIR (unless given), and resolves once it listens (and has
 * printed `readyLine`, for a service with more to do after its first listener). With `readyUrl` (a service told its
 * port, logging only warnings) it resolves once GET `readyUrl` answers 200 instead. Only
 * PATH and HOME are passed through from this process; everything else comes from `env`. Gives up after `timeoutMs`
 * with the service's output in the error.
 *
 * @example const memory = await startServiceProcess('memory', { MEMORY_MCP_TOKEN: token }); ...; await memory.stop()
 */
export async function startServiceProcess(
  name: string,
  env: Record<string, string> = {},
  options: { timeoutMs?: number; dataDir?: string; readyLine?: RegExp; readyUrl?: string } = {},
): Promise<ServiceProcess> {
  const owned = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `platform-${name}-`));
  const child = spawn(process.execPath, [cli, 'serve', name], {
    env: { ...inheritedChildEnv(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    running.delete(child);
    if (owned) rmSync(dataDir, { recursive: true, force: true });
  });
  const logs: string[] = [];
  // The first listener's address; with `readyLine`, resolved only once that line has been printed too.
  const url = await new Promise<string>((resolve, reject) => {
    let listeningAt: string | undefined;
    let ready = options.readyLine === undefined;
    const timer = setTimeout(() => fail(`did not start within ${options.timeoutMs ?? 60_000} ms`), options.timeoutMs ?? 60_000);
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name} ${why}:\n${logs.slice(-30).join('\n')}`));
    };
    const read = (stream: NodeJS.ReadableStream) => {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        partial += chunk;
        const lines = partial.split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          logs.push(line);
          listeningAt ??= /Server listening at (http:\/\/[^"\s]+)/.exec(line)?.[1];
          if (options.readyLine?.test(line)) ready = true;
          if (listeningAt !== undefined && ready) {
            clearTimeout(timer);
            resolve(listeningAt);
          }
        }
      });
    };
    read(child.stdout as NodeJS.ReadableStream);
    read(child.stderr as NodeJS.ReadableStream);
    if (options.readyUrl !== undefined)
      void pollReady(options.readyUrl, () => child.exitCode !== null || child.signalCode !== null).then((ready) => {
        if (!ready) return;
        clearTimeout(timer);
        resolve(new URL(options.readyUrl as string).origin);
      });
    child.once('exit', (code, signal) => fail(`exited with ${code ?? signal} before listening`));
  });
  const stopWith = async (signal: NodeJS.Signals, graceMs: number) => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return {
    name,
    url,
    dataDir,
    process: child,
    logs,
    stop: (graceMs = 10_000) => stopWith('SIGTERM', graceMs),
    kill: () => stopWith('SIGKILL', 0),
  };
}

/** Polls `url` every 20 ms until it answers 200 (true) or the process has gone (false). */
async function pollReady(url: string, gone: () => boolean): Promise<boolean> {
  while (!gone()) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
