import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bindGroup } from '@platform/kit/bound-children';
import { freePort } from '@platform/kit/free-port';
import type { Logger } from 'pino';
import type { ProcessProviderSettings } from '../config.ts';
import type { EnvironmentProvider, EnvironmentState, EnvironmentUser, ProvisionedEnvironment } from './provider.ts';

interface RunningDaemon {
  pid: number;
  port: number;
  /** Set for a daemon this router started, whose exit event removes it; undefined for one adopted from a router before. */
  child: ChildProcess | undefined;
  /** Its base URL, built once: asked on every proxied request. */
  address: string;
}

/** Written into the volume at each start, so a restarted router finds the daemon it left running. */
const runFile = 'router-run.json';
const stopGraceMs = 15_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Each user's daemon as a child process of this machine: the volume is a folder (`<volumes>/<user id>`, the daemon's
 * DATA_DIR inside it and its log beside), a port picked when it starts. Daemons run detached, so they outlive a router
 * that crashes; the next router adopts them (the pid is alive and the daemon on that port answers `/me` as that user,
 * with that user's bearer) instead of starting a second one on the same folder.
 */
export class ProcessProvider implements EnvironmentProvider {
  readonly name = 'process';
  readonly #settings: ProcessProviderSettings;
  readonly #tokenFor: (userId: string) => string;
  readonly #secretsFor: (userId: string) => Record<string, string>;
  readonly #logger: Logger;
  readonly #running = new Map<string, RunningDaemon>();

  constructor(
    settings: ProcessProviderSettings,
    options: { tokenFor: (userId: string) => string; secretsFor: (userId: string) => Record<string, string>; logger: Logger },
  ) {
    this.#settings = settings;
    this.#tokenFor = options.tokenFor;
    this.#secretsFor = options.secretsFor;
    this.#logger = options.logger;
  }

  #volume(user: EnvironmentUser): string {
    return user.volume ?? join(this.#settings.volumesDir, user.id);
  }

  async ensure(user: EnvironmentUser): Promise<ProvisionedEnvironment> {
    const volume = this.#volume(user);
    mkdirSync(join(volume, 'data'), { recursive: true, mode: 0o700 });
    return { environmentId: `process:${user.id}`, address: null, volume };
  }

  async start(user: EnvironmentUser): Promise<void> {
    const known = this.#running.get(user.id);
    if (known && alive(known.pid)) return;
    this.#running.delete(user.id);
    if (await this.#adopt(user)) return;
    if (!existsSync(this.#settings.daemonEntry))
      throw new Error(`the daemon bundle is missing at ${this.#settings.daemonEntry}: run npm install (or npm run build -w services/daemon)`);
    const volume = this.#volume(user);
    mkdirSync(join(volume, 'data'), { recursive: true, mode: 0o700 });
    const port = await freePort();
    const log = openSync(join(volume, 'daemon.log'), 'a', 0o600);
    const child = spawn(process.execPath, [...this.#settings.nodeFlags, this.#settings.daemonEntry], {
      env: {
        PATH: process.env.PATH ?? '',
        // Node's compile cache (set by `platform`): a daemon's bundle is compiled once, not at every user's start.
        ...(process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {}),
        ...this.#settings.daemonEnv,
        DAEMON_USER_ID: user.id,
        DATA_DIR: join(volume, 'data'),
        HOST: '127.0.0.1',
        PORT: String(port),
        ...this.#secretsFor(user.id),
      },
      detached: true,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    child.unref();
    // Detached, a daemon outlives a router that crashes, for the next one to adopt; under `platform up`
    // (ROUTER_DAEMONS_EXIT_WITH_ROUTER) none may outlive it, so it is stopped when the router's process is gone.
    if (this.#settings.exitWithRouter) bindGroup(child);
    const pid = child.pid as number;
    this.#running.set(user.id, { pid, port, child, address: `http://127.0.0.1:${port}` });
    child.once('exit', (code, signal) => {
      if (this.#running.get(user.id)?.pid === pid) this.#running.delete(user.id);
      this.#logger.info({ user: user.id, pid, code, signal }, 'daemon exited');
    });
    writeFileSync(join(volume, runFile), JSON.stringify({ pid, port, started_at: new Date().toISOString() }), { mode: 0o600 });
    this.#logger.info({ user: user.id, pid, port }, 'daemon started');
  }

  async #adopt(user: EnvironmentUser): Promise<boolean> {
    let run: { pid?: unknown; port?: unknown };
    try {
      run = JSON.parse(readFileSync(join(this.#volume(user), runFile), 'utf8'));
    } catch {
      return false;
    }
    if (typeof run.pid !== 'number' || typeof run.port !== 'number' || !alive(run.pid)) return false;
    try {
      const me = await fetch(`http://127.0.0.1:${run.port}/me`, {
        headers: { authorization: `Bearer ${this.#tokenFor(user.id)}` },
        signal: AbortSignal.timeout(2_000),
      });
      const body = (await me.json()) as { data?: { user_id?: unknown } };
      if (!me.ok || body.data?.user_id !== user.id) return false;
    } catch {
      return false;
    }
    this.#running.set(user.id, { pid: run.pid, port: run.port, child: undefined, address: `http://127.0.0.1:${run.port}` });
    this.#logger.info({ user: user.id, pid: run.pid, port: run.port }, 'daemon adopted');
    return true;
  }

  async stop(user: EnvironmentUser): Promise<void> {
    const daemon = this.#running.get(user.id) ?? (await this.#adopt(user).then((adopted) => (adopted ? this.#running.get(user.id) : undefined)));
    if (daemon === undefined) return;
    // SIGTERM drains: the step in flight finishes and the journal is on disk before it exits.
    try {
      process.kill(daemon.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
    const deadline = Date.now() + stopGraceMs;
    while (alive(daemon.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    if (alive(daemon.pid)) process.kill(daemon.pid, 'SIGKILL');
    this.#running.delete(user.id);
    rmSync(join(this.#volume(user), runFile), { force: true });
  }

  async destroy(user: EnvironmentUser): Promise<void> {
    await this.stop(user);
    rmSync(this.#volume(user), { recursive: true, force: true });
  }

  async address(user: EnvironmentUser): Promise<string | undefined> {
    const daemon = this.#running.get(user.id);
    // A child of this router leaves #running when it exits; only an adopted daemon (no exit event reaches us) is asked
    // of the kernel whether it still lives, a system call per request otherwise spent on every one.
    if (daemon === undefined || (daemon.child === undefined && !alive(daemon.pid))) return undefined;
    return daemon.address;
  }

  async state(user: EnvironmentUser): Promise<EnvironmentState> {
    if (this.#running.has(user.id)) return 'running';
    return existsSync(this.#volume(user)) ? 'stopped' : 'absent';
  }

  running(): string[] {
    return [...this.#running.keys()];
  }

  async close(): Promise<void> {
    if (!this.#settings.stopOnExit) return;
    await Promise.all([...this.#running.keys()].map((id) => this.stop({ id, region: '', environmentId: null, volume: null })));
  }
}
