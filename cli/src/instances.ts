import { join } from 'node:path';
import { spawnBound } from '@platform/kit/bound-children';
import { ConfigError, type Env } from '@platform/kit/config';
import { freePort } from '@platform/kit/free-port';
import type { StartedService } from '@platform/kit/lifecycle';
import { terminalLogLines } from '@platform/kit/terminal-log-lines';
import { startInstanceFront } from './instance-front.ts';

/**
 * The services `up --instances` may run several of, on one PostgreSQL database: the scheduler's instances share the
 * due alarms (each claimed by one instance at a time), settlement's extra instances are standbys that take over when
 * the sequencer (the holder of the advisory lock) goes. The others keep state in their process or are not written for
 * it.
 */
export const scalable = ['scheduler', 'settlement'] as const;

/** `scheduler=3,settlement=2` → counts per service; a usage error (ConfigError) names what is wrong. */
export function parseInstances(spec: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const part of spec.split(',')) {
    const match = /^([a-z]+)=(\d{1,2})$/.exec(part.trim());
    if (!match) throw new ConfigError(`--instances takes <service>=<count>[,…], e.g. scheduler=3,settlement=2; got "${part}"`);
    const [, name = '', count = ''] = match;
    if (!(scalable as readonly string[]).includes(name))
      throw new ConfigError(`--instances: ${name} runs as one instance; only ${scalable.join(' and ')} scale out`);
    const n = Number(count);
    if (n < 1 || n > 16) throw new ConfigError(`--instances: ${name}=${n}: between 1 and 16 instances`);
    counts.set(name, n);
  }
  return counts;
}

/** Several instances need one database they all reach: refused on embedded PGlite, which one process owns. */
export function checkInstancesSettings(counts: ReadonlyMap<string, number>, env: Env): void {
  const scaled = [...counts].filter(([, n]) => n > 1).map(([name]) => name);
  if (scaled.length > 0 && !env.DATABASE_URL)
    throw new ConfigError(
      `--instances ${scaled.join(',')} needs DATABASE_URL (one PostgreSQL the instances share): embedded PGlite is opened by one process only`,
    );
}

const platformBin = join(import.meta.dirname, '..', 'bin', 'platform.js');

/**
 * One instance as its own process (`platform serve <name>`) with the settings `up` gave the first: its own free
 * port, the same database and data folder (settlement's instances must share the sequencer and EVM keys). It runs in
 * a process group of its own, bound to `up` (stopped in its turn, never outliving `up`), and is ready once `/healthz`
 * answers. A process of its own, so an instance can die alone, as a machine would.
 */
export async function startInstance(name: string, instance: number, env: Env): Promise<StartedService> {
  const port = await freePort();
  const host = env.HOST || '127.0.0.1';
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  const childEnv = Object.fromEntries(Object.entries({ ...env, PORT: String(port) }).filter((entry): entry is [string, string] => entry[1] !== undefined));
  // It writes to up's terminal: the same one line per event as the services in up's own process.
  const lines = terminalLogLines();
  if (lines !== undefined) childEnv.PLATFORM_TERMINAL_LOG_LINES = lines.requests ? 'requests' : 'events';
  const child = spawnBound(process.execPath, [platformBin, 'serve', name], { env: childEnv, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // The service's own name is its front's (startInstanceFront), which the services wired to it find it by.
  const label = `${name}-${instance}`;
  for (;;) {
    const ready = await fetch(`${url}/healthz`)
      .then((answer) => answer.ok)
      .catch(() => false);
    if (ready) break;
    const code = await Promise.race([exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100))]);
    if (code !== undefined) throw new Error(`${label} exited with ${code} before it was ready`);
  }
  const service: StartedService = {
    name: label,
    url,
    dataLocation: `PostgreSQL (instance ${instance} of ${name}, pid ${child.pid})`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0 && code !== null) throw new Error(`${label} exited with ${code}`);
    },
  };
  return service;
}

/**
 * Every instance of a scaled service: the first alone (it creates the shared keys, deploys), then the others at once;
 * then the one address in front of them that the other services are wired to.
 */
export async function startInstances(name: string, count: number, env: Env, started: StartedService[]): Promise<StartedService> {
  const first = await startInstance(name, 1, env);
  started.push(first);
  const others = await Promise.allSettled(Array.from({ length: count - 1 }, (_, index) => startInstance(name, index + 2, env)));
  for (const other of others) if (other.status === 'fulfilled') started.push(other.value);
  const failed = others.find((other) => other.status === 'rejected');
  if (failed) throw failed.reason;
  const front = await startInstanceFront(name, [first, ...others.map((other) => (other as PromiseFulfilledResult<StartedService>).value)]);
  started.push(front);
  return front;
}
