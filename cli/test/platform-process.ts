import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/* The `platform` command as a child process, as a person runs it: what the tests of `up` and its commands share. */

const bin = join(import.meta.dirname, '..', 'bin', 'platform.js');
const repoRoot = join(import.meta.dirname, '..', '..');
export const limitMs = 20_000;
// `up` opens a PGlite per service in turn, a few seconds each on a loaded 2-core CI machine.
export const upLimitMs = 90_000;

/** The test's environment minus anything that would point a service at a real database or production mode. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...extra };
  for (const name of ['DATABASE_URL', 'NODE_ENV', 'PORT', 'DATA_DIR', 'IDP_URL', 'NODE_TEST_CONTEXT']) if (!(name in extra)) delete env[name];
  return env;
}

export function platform(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Rejects with `what` when the promise has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the command to completion; resolves with its exit code and output. */
export async function runToExit(args: string[], env: NodeJS.ProcessEnv, ms = limitMs): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = platform(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  try {
    const [code] = (await within(once(child, 'close'), ms, `platform ${args.join(' ')} to exit`)) as [number | null];
    return { code, stdout, stderr };
  } finally {
    child.kill('SIGKILL');
  }
}

/** Resolves with the first stdout line matching `pattern`; rejects if the process exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp, seen: string[]): Promise<string> {
  const { promise, resolve, reject } = Promise.withResolvers<string>();
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on('line', (line) => {
    seen.push(line);
    if (pattern.test(line)) resolve(line);
  });
  child.once('exit', (code) => reject(new Error(`platform exited with ${code} before printing ${pattern}`)));
  return promise;
}
