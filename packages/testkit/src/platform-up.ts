import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '@platform/kit/free-port';
import { inheritedChildEnv } from './child-env.ts';
import { type CommandRun, platformBin, runPlatform } from './run-command.ts';
import { createTempDatabase, type TempDatabase } from './temp-database.ts';

/** One row of the table `platform up` prints once every service listens. */
export interface PlatformService {
  name: string;
  url: string;
  /** The table's third column: `PGlite in <folder>`, `PostgreSQL …`, `files in <folder>`. */
  data: string;
}

/** `platform up` running as a child process, as a person starts it, with what a test needs to talk to it. */
export interface RunningPlatform {
  readonly dataDir: string;
  /** The environment `up` was started with (nothing else of the test's leaked in). */
  readonly env: Readonly<Record<string, string>>;
  readonly services: ReadonlyMap<string, PlatformService>;
  /** A service's URL from the table (`router` is the public front door); throws for a service not in it. */
  url(name: string): string;
  /** Everything `up` printed so far. */
  output(): { stdout: string; stderr: string };
  /** `platform <args>` against this platform (its DATA_DIR, so `token` and `secret` find its root secret). */
  run(args: readonly string[], env?: Record<string, string>): Promise<CommandRun>;
  /** A fresh token of the development user for the router (`platform token`). */
  token(): Promise<string>;
  /** A secret `up` derived (`platform secret <SETTING>`), for a test that plays an operator. */
  secret(setting: string): Promise<string>;
  /** The processes `up` runs below it right now (as `ps` shows them): the chain node, the router's daemons, … */
  processes(): { pid: number; command: string }[];
  /**
   * Ctrl-C: SIGINT to `up`'s process group (as a terminal sends it: `up` runs in a group of its own, like a shell's
   * job, and every child it did not move out of the group gets it too), then waits for `up` to exit and for every process it had started (the local chain node, the
   * router's daemons, their MCP children) to be gone. Resolves with `up`'s exit code; rejects naming any process
   * that outlived it (they are killed then). Removes the data folder (unless it was given) and the database it made.
   */
  stop(): Promise<number | null>;
  /** SIGKILL to `up` and everything it started (a failed test's cleanup); never throws. */
  kill(): Promise<void>;
  /**
   * SIGKILL to `up` alone (a crash): resolves, once it has exited, with the processes it had started, left to
   * stop on their own. The data folder and database are kept (`kill` removes them).
   */
  crash(): Promise<{ pid: number; command: string }[]>;
}

/**
 * The engine a whole-platform scenario runs on: PostgreSQL when TEST_DATABASE_URL is given (CI), embedded PGlite
 * otherwise (a plain `npm test`). One, not both: such a scenario starts nine services and the daemons for minutes of
 * two cores, every service's own tests run on both engines, and the first start as documented (cli/test/platform-stop.test.ts)
 * runs the embedded default whatever is set.
 */
export function platformEngine(): { name: string; postgresAdminUrl?: string } {
  const url = process.env.TEST_DATABASE_URL;
  return url ? { name: 'PostgreSQL', postgresAdminUrl: url } : { name: 'PGlite' };
}

export interface PlatformOptions {
  /** Settings for `up`; they win over the harness's (PORT=0, its own DATA_DIR and chain port, LOG_LEVEL=warn). */
  env?: Record<string, string>;
  /** A data folder to start on (a restart on the same folder); it is kept. Default: a new temporary one, removed by `stop`. */
  dataDir?: string;
  /** Runs on a fresh PostgreSQL database made next to this URL (dropped by `stop`) instead of PGlite. */
  postgresAdminUrl?: string;
  /** Arguments after `up` (e.g. `--instances scheduler=3`). */
  args?: readonly string[];
  /** How long `up` may take to print its ready message (default 180 s: a shared 2-core machine is slow). */
  readyTimeoutMs?: number;
}

const running = new Set<ChildProcess>();
// A test that dies half way must not leave a platform running (ports, a chain node, daemons).
process.once('exit', () => {
  for (const child of running) for (const pid of [...descendants(child.pid ?? 0), child.pid ?? 0]) signal(pid, 'SIGKILL');
});

/**
 * Starts `cli/bin/platform.js up` by path with a clean environment (PATH and HOME only, plus `options.env`), its own
 * DATA_DIR, PORT=0 and a chain port of its own (the contract engine adopts a node it finds answering on its port, so
 * two platforms must never share one), and resolves once the ready message has printed its last line, with the
 * table's URLs parsed. Rejects with `up`'s output when it exits or times out first.
 *
 * @example const platform = await startPlatform({ env: { GATEWAY_UPSTREAM_URL: model.url } }); try { ... } finally { await platform.stop() }
 */
export async function startPlatform(options: PlatformOptions = {}): Promise<RunningPlatform> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'platform-up-')));
  const database: TempDatabase | undefined = options.postgresAdminUrl ? await createTempDatabase(options.postgresAdminUrl, 'platform') : undefined;
  const env: Record<string, string> = {
    ...inheritedChildEnv(),
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    PORT: '0',
    CONTRACTS_LOCAL_RPC_URL: `http://127.0.0.1:${await freePort()}`,
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  };
  const child = spawn(process.execPath, [platformBin, 'up', ...(options.args ?? [])], {
    cwd: join(platformBin, '..', '..', '..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => running.delete(child));
  const stdout: string[] = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    await database?.drop();
  };
  const kill = async () => {
    if (cleaned) return;
    for (const pid of [...descendants(child.pid ?? 0), child.pid ?? 0]) signal(pid, 'SIGKILL');
    await exited;
    await cleanUp();
  };
  try {
    await readyMessage(child, stdout, options.readyTimeoutMs ?? 180_000);
  } catch (error) {
    await kill();
    throw new Error(`${(error as Error).message}\nstdout:\n${stdout.join('\n')}\nstderr:\n${stderr}`);
  }
  const stop = async () => {
    const tree = descendants(child.pid ?? 0);
    signal(-(child.pid ?? 0), 'SIGINT');
    const code = await withTimeout(exited, 60_000, 'platform up to stop after SIGINT').catch(async (error: Error) => {
      await kill();
      throw error;
    });
    // What it started, and anything else still in its process group (both must be gone).
    const left = await outlived([...new Set([...tree, ...groupMembers(child.pid ?? 0)])], 20_000);
    await cleanUp();
    if (left.length > 0) throw new Error(`platform up exited (${code}) but left running: ${left.join('; ')}\nstderr:\n${stderr}`);
    return code;
  };
  return {
    ...commands(env),
    dataDir,
    env,
    ...table(stdout),
    output: () => ({ stdout: stdout.join('\n'), stderr }),
    processes: () => processesBelow(child),
    stop,
    kill,
    async crash() {
      const tree = processesBelow(child);
      signal(child.pid ?? 0, 'SIGKILL');
      await exited;
      return tree;
    },
  };
}

/** The `platform` commands a test runs against this platform: the settings that find its root secret and identity. */
function commands(env: Readonly<Record<string, string>>): Pick<RunningPlatform, 'run' | 'token' | 'secret'> {
  const own = Object.fromEntries(['HOME', 'DATA_DIR', 'PLATFORM_SECRET', 'IDENTITY_DATA_DIR'].flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
  const run = (args: readonly string[], extra: Record<string, string> = {}) => runPlatform(args, { env: { ...own, ...extra } });
  const printed = async (args: readonly string[]) => {
    const answer = await run(args);
    if (answer.code !== 0) throw new Error(`platform ${args.join(' ')} exited with ${answer.code}: ${answer.stderr}`);
    return answer.stdout.trim();
  };
  return { run, token: () => printed(['token']), secret: (setting) => printed(['secret', setting]) };
}

/** The ready table's services, and `url(name)`. */
function table(stdout: readonly string[]): Pick<RunningPlatform, 'services' | 'url'> {
  const services = parseTable(stdout);
  return {
    services,
    url(name) {
      const service = services.get(name);
      if (service === undefined) throw new Error(`platform up printed no ${name} (it has ${[...services.keys()].join(', ')})`);
      return service.url;
    },
  };
}

function processesBelow(child: ChildProcess): { pid: number; command: string }[] {
  return descendants(child.pid ?? 0).map((pid) => ({ pid, command: commandLine(pid) }));
}

/** Resolves once `up` prints the ready message's last line (the command to talk to the agent). */
async function readyMessage(child: ChildProcess, seen: string[], timeoutMs: number): Promise<void> {
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on('line', (line) => {
    seen.push(line);
    if (/npx platform delegate/.test(line)) resolve();
  });
  child.once('exit', (code, signalName) => reject(new Error(`platform up exited with ${code ?? signalName} before it was ready`)));
  await withTimeout(promise, timeoutMs, 'platform up to print its ready message');
}

/** The table's rows: from the header `name url data` to the first blank line. */
function parseTable(stdout: readonly string[]): Map<string, PlatformService> {
  const services = new Map<string, PlatformService>();
  const start = stdout.findIndex((line) => /^name\s+url\s+data$/.test(line));
  for (const line of stdout.slice(start + 1)) {
    if (line.trim() === '') break;
    const [name, url, data] = line.split(/\s{2,}/);
    if (name && url) services.set(name, { name, url, data: data ?? '' });
  }
  return services;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every live process below `root` (children, theirs, …), read from /proc: detached daemons included. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = processStat(Number(entry));
    if (stat === undefined || stat.state === 'Z') continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [root];
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const pid of children.get(next) ?? []) {
      found.push(pid);
      queue.push(pid);
    }
  return found;
}

/** The live processes of a process group, from /proc. */
function groupMembers(group: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      const stat = processStat(pid);
      return stat !== undefined && stat.state !== 'Z' && stat.pgrp === group;
    });
}

/** State, parent and process group of a process, or undefined once it is gone. */
function processStat(pid: number): { state: string; ppid: number; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after its last `)` are fixed.
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state ?? '', ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/** Whether a process is running (not gone, not a zombie), read from /proc. */
export const alive = (pid: number): boolean => {
  const stat = processStat(pid);
  return stat !== undefined && stat.state !== 'Z';
};

/** A signal to a process, or to a process group for a negative id. */
function signal(pid: number, name: NodeJS.Signals): void {
  if (pid === 0 || pid === -1) return;
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Waits (polling /proc every 50 ms) for the processes to end; those still alive at the deadline are killed and named. */
async function outlived(pids: readonly number[], ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  let left = pids.filter(alive);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = left.filter(alive);
  }
  const named = left.map((pid) => `${pid} ${commandLine(pid)}`);
  for (const pid of left) signal(pid, 'SIGKILL');
  return named;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 200);
  } catch {
    return '(gone)';
  }
}
