import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The service's entry point, run as its own program (the same file `platform serve settlement` runs). */
export const settlementMain = join(import.meta.dirname, '..', 'src', 'main.ts');

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The real settlement service in a child process of its own: killable like a production process. */
export interface ServiceProcess {
  readonly url: string;
  readonly pid: number;
  /** Settles once the process has exited, whatever ended it. */
  readonly exited: Promise<ProcessExit>;
  /**
   * Sends `signal` and resolves once the process has exited. A process that outlives `graceMs` (a SIGTERM
   * stuck in shutdown) gets SIGKILL, so this never waits forever. Calling it after the exit just returns it.
   */
  kill(signal?: NodeJS.Signals, graceMs?: number): Promise<ProcessExit>;
  /** The last lines the process wrote (stdout and stderr), for failure messages. */
  output(): string;
}

export interface ServiceProcessOptions {
  /** The program to run with this node; the settlement service by default. */
  entry?: string;
  /**
   * How long the process may take to log its URL before it is killed and the start fails: 60 s by default, since a
   * first start deploys the development contracts and a loaded CI machine once took over 20 s for it.
   */
  readyTimeoutMs?: number;
  /** How many output lines `output()` keeps. */
  keepLines?: number;
}

/** Settings that must come from the test, never leak in from the shell that runs it. */
const inheritedSettings = /^(DATABASE_URL|NODE_ENV|PORT|HOST|DATA_DIR|LOG_LEVEL|NODE_TEST_CONTEXT|NODE_OPTIONS|SETTLEMENT_.*|LEDGER_TOKEN)$/;

/**
 * Spawns the service with `env` (on top of the parent's environment minus any service setting) and resolves
 * once it has logged `settlement listening` with its URL. Fails with the process's output when it exits
 * first, or when `readyTimeoutMs` passes without that line (the process is then killed).
 *
 * @example const service = await startServiceProcess({ DATABASE_URL: url, PORT: '0', DATA_DIR: dir }); await service.kill('SIGKILL');
 */
export async function startServiceProcess(env: Record<string, string>, options: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  const entry = options.entry ?? settlementMain;
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const keepLines = options.keepLines ?? 200;
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!inheritedSettings.test(name)) childEnv[name] = value;
  Object.assign(childEnv, env);

  const child: ChildProcess = spawn(process.execPath, [entry], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // 'close' comes once the process has exited and its output pipes are drained.
  const closed = once(child, 'close').catch(() => undefined);
  // A spawn failure (no such executable) emits 'error' and maybe never 'exit'.
  const spawnFailed = once(child, 'error').then(([error]) => error as Error);

  const tail: string[] = [];
  const keep = (stream: string, line: string) => {
    tail.push(`${stream}: ${line}`);
    if (tail.length > keepLines) tail.shift();
  };
  const output = () => tail.join('\n');

  const listening = Promise.withResolvers<string>();
  // Both streams are read to the end for the process's whole life: an undrained pipe would block its logger.
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => keep('stderr', line));
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    keep('stdout', line);
    const url = listeningUrl(line);
    if (url) listening.resolve(url);
  });

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), readyTimeoutMs);
  });
  const first = await Promise.race([
    listening.promise.then((url) => ({ url })),
    exited.then((exit) => ({ exit })),
    spawnFailed.then((error) => ({ error })),
    timedOut,
  ]);
  clearTimeout(timer);

  const kill = async (signal: NodeJS.Signals = 'SIGKILL', graceMs = 10_000): Promise<ProcessExit> => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    child.kill(signal);
    if (signal === 'SIGKILL') return exited;
    let escalate: NodeJS.Timeout | undefined;
    const escalated = new Promise<void>((resolve) => {
      escalate = setTimeout(() => {
        child.kill('SIGKILL');
        resolve();
      }, graceMs);
    });
    await Promise.race([exited, escalated]);
    clearTimeout(escalate);
    return exited;
  };

  if (first === 'timeout') {
    await kill('SIGKILL');
    throw new Error(`the service logged no "settlement listening" line within ${readyTimeoutMs} ms; its output:\n${output()}`);
  }
  if ('exit' in first) {
    // Let the pipes deliver what the process wrote before it died (bounded: a grandchild could hold them open).
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise((resolve) => (drainTimer = setTimeout(resolve, 2_000)))]);
    clearTimeout(drainTimer);
    throw new Error(`the service exited (code ${first.exit.code}, signal ${first.exit.signal}) before it was listening; its output:\n${output()}`);
  }
  if ('error' in first) throw new Error(`could not start ${process.execPath} ${entry}: ${first.error.message}`);
  return { url: first.url, pid: child.pid as number, exited, kill, output };
}

/** The URL from pino's `settlement listening` line; undefined for any other line (or one that is not JSON). */
function listeningUrl(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
    return entry.msg === 'settlement listening' && typeof entry.url === 'string' ? entry.url : undefined;
  } catch {
    return undefined;
  }
}
