import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/*
 * Where the CPU goes during a run, read from Linux's /proc: the machine as a whole (/proc/stat), every
 * process named `postgres` (the server and its backends, WAL writer, checkpointer) and the processes we
 * name (the service, pgbench). Whatever the machine spent beyond those is "other": another job on a
 * shared box, which makes a run unrepresentative. Elsewhere (no /proc) the figures are NaN and print as
 * "–". Ticks are USER_HZ, 100 per second on Linux.
 */

const ticksPerSecond = 100;

export interface CpuSnapshot {
  at: number;
  /** Busy ticks of all cores together (user + nice + system + irq + softirq + steal). */
  machineBusy: number;
  /** Of those, the ticks the hypervisor gave to other guests (steal): on a shared VM, time our processes waited for a core they had. */
  machineSteal: number;
  /** utime + stime per postgres pid. */
  postgres: Map<number, number>;
  /** The database each postgres backend serves (from its process title); absent for the server's own processes. */
  postgresDatabase: Map<number, string>;
  /** utime + stime of each process asked for (0 once it has gone). */
  named: Map<number, number>;
}

function machineTicks(): { busy: number; steal: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return { busy: user + nice + system + irq + softirq + steal, steal };
}

/** Command name and utime + stime of one process, or undefined once it has gone. */
function processTicks(pid: number): { name: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; the fields after it are fixed (utime is field 14).
    const close = stat.lastIndexOf(')');
    const rest = stat.slice(close + 2).split(' ');
    return { name: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(rest[11]) + Number(rest[12]) };
  } catch {
    return undefined;
  }
}

/** A backend's title is `postgres: <cluster>: <user> <database> <client> <state>`; the server's own processes have none. */
function backendDatabase(pid: number): string | undefined {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return /^postgres: [^:]+: \S+ (\S+) \S+\(\d+\)/.exec(title)?.[1];
  } catch {
    return undefined;
  }
}

function postgresTicks(): { ticks: Map<number, number>; databases: Map<number, string> } {
  const ticks = new Map<number, number>();
  const databases = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const found = processTicks(Number(entry));
    if (found?.name !== 'postgres') continue;
    ticks.set(Number(entry), found.ticks);
    const database = backendDatabase(Number(entry));
    if (database !== undefined) databases.set(Number(entry), database);
  }
  return { ticks, databases };
}

/**
 * Reads the machine, postgres and the `pids` given; undefined where /proc is missing.
 *
 * @example const from = cpuSnapshot([service.pid]); await run(); const used = cpuBetween(from, cpuSnapshot([service.pid]));
 */
export function cpuSnapshot(pids: ReadonlyArray<number | undefined> = []): CpuSnapshot | undefined {
  try {
    const named = new Map<number, number>();
    for (const pid of pids) if (pid !== undefined) named.set(pid, processTicks(pid)?.ticks ?? 0);
    const postgres = postgresTicks();
    const machine = machineTicks();
    return {
      at: performance.now(),
      machineBusy: machine.busy,
      machineSteal: machine.steal,
      postgres: postgres.ticks,
      postgresDatabase: postgres.databases,
      named,
    };
  } catch {
    return undefined;
  }
}

/**
 * Cores busy between two snapshots: the machine (and of that, the hypervisor's steal) and postgres (all of it, or with `postgresOf` only the backends
 * serving some databases: on a server others use too, what a benchmark's own databases cost). A backend that
 * started in between counts from zero; one that ended in between is lost, so take the end snapshot while the
 * backends still live.
 *
 * @example const { machine, postgres, named } = cpuBetween(from, to); console.log(machine, postgres, named(service.pid));
 */
export function cpuBetween(
  from: CpuSnapshot | undefined,
  to: CpuSnapshot | undefined,
): {
  machine: number;
  steal: number;
  postgres: number;
  postgresOf: (databases: readonly string[]) => number;
  named: (pid: number | undefined) => number;
} {
  if (!from || !to) return { machine: Number.NaN, steal: Number.NaN, postgres: Number.NaN, postgresOf: () => Number.NaN, named: () => Number.NaN };
  const seconds = (to.at - from.at) / 1000;
  const cores = (ticks: number) => ticks / ticksPerSecond / seconds;
  const postgresTicksOf = (counted: (pid: number) => boolean) => {
    let sum = 0;
    for (const [pid, ticks] of to.postgres) if (counted(pid)) sum += ticks - (from.postgres.get(pid) ?? 0);
    return sum;
  };
  return {
    machine: cores(to.machineBusy - from.machineBusy),
    steal: cores(to.machineSteal - from.machineSteal),
    postgres: cores(postgresTicksOf(() => true)),
    postgresOf: (databases) => cores(postgresTicksOf((pid) => databases.includes(to.postgresDatabase.get(pid) ?? ''))),
    named: (pid) => (pid === undefined ? Number.NaN : cores((to.named.get(pid) ?? 0) - (from.named.get(pid) ?? 0))),
  };
}
