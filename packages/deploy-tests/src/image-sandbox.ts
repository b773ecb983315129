import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The user the image runs as (USER in the Containerfile). */
export const imageUser = 10001;

export interface ImageConfig {
  User: string;
  Env: string[];
  Entrypoint: string[];
  Cmd: string[];
  WorkingDir: string;
  Volumes: Record<string, unknown>;
  Labels: Record<string, string>;
  ExposedPorts: Record<string, unknown>;
  StopSignal: string;
}

/** The image's config and its HEALTHCHECK, as `podman image inspect` reads them. */
export function inspectImage(image: string): { config: ImageConfig; healthcheck: { Test: string[] } | undefined; size: number } {
  const [found] = JSON.parse(execFileSync('podman', ['image', 'inspect', image], { encoding: 'utf8' })) as {
    Config: ImageConfig;
    Healthcheck?: { Test: string[] };
    Size: number;
  }[];
  if (found === undefined) throw new Error(`podman has no image ${image}: sh scripts/image/build-image.sh`);
  return { config: found.Config, healthcheck: found.Healthcheck, size: found.Size };
}

/**
 * The image's root filesystem in a folder of its own, as an engine lays it out: unpacked from a container created
 * (never started) from the image, owners kept, with the mount points an engine adds (/proc, and /etc/hosts and
 * /etc/resolv.conf, which engines bind from the host).
 */
export function unpackImage(image: string): { rootfs: string; remove(): void } {
  const folder = mkdtempSync(join(tmpdir(), 'platform-image-'));
  // The user must reach the root filesystem through this folder, as it reaches / in a container.
  chmodSync(folder, 0o755);
  const rootfs = join(folder, 'rootfs');
  mkdirSync(rootfs);
  const container = execFileSync('podman', ['create', '--quiet', image], { encoding: 'utf8' }).trim();
  try {
    execFileSync('sh', ['-c', `podman export "$1" | tar -x -C "$2"`, 'unpack', container, rootfs], { stdio: ['ignore', 'ignore', 'pipe'] });
  } finally {
    execFileSync('podman', ['rm', '--force', container], { stdio: 'ignore' });
  }
  mkdirSync(join(rootfs, 'proc'), { recursive: true });
  for (const file of ['etc/hosts', 'etc/resolv.conf']) writeFileSync(join(rootfs, file), '', { flag: 'a' });
  return { rootfs, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

export interface SandboxedProcess {
  child: ChildProcess;
  /** Everything it printed, stdout and stderr. */
  output(): string;
  exited: Promise<number | null>;
  /** The pids of the processes it runs (bwrap's, tini and what tini runs). */
  descendants(): number[];
  /** SIGTERM to tini, as an engine's stop sends it to the container's first process. */
  stop(): Promise<number | null>;
}

/**
 * Runs the image's entrypoint with `args` (its CMD when there are none) in the unpacked root filesystem, as an engine would run the container, with
 * bubblewrap: as the image's user (the real uid 10001, set before bwrap, so files owned by root stay read-only to
 * it), the root filesystem read-only, `data` (owned by that user) as the volume at /data, a private /tmp, its own pid
 * namespace with tini as pid 1, exactly `env` (the image's ENV and the service's settings) and the host's network.
 */
export function runInImage(
  rootfs: string,
  config: ImageConfig,
  args: readonly string[],
  env: Record<string, string>,
  data: string,
  options: { trace?: string } = {},
): SandboxedProcess {
  chownSync(data, imageUser, imageUser);
  const settings = { ...Object.fromEntries(config.Env.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)])), ...env };
  const bwrap = [
    ...['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--as-pid-1'],
    ...['--ro-bind', rootfs, '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', data, '/data'],
    ...['--ro-bind', '/etc/hosts', '/etc/hosts', '--ro-bind', '/etc/resolv.conf', '/etc/resolv.conf'],
    '--clearenv',
    ...Object.entries(settings).flatMap(([name, value]) => ['--setenv', name, value]),
    ...['--chdir', config.WorkingDir],
    ...config.Entrypoint,
    // As an engine does: the image's CMD when the run names no arguments.
    ...(args.length > 0 ? args : config.Cmd),
  ];
  const sandboxed = ['setpriv', `--reuid=${imageUser}`, `--regid=${imageUser}`, '--clear-groups', 'bwrap', ...bwrap];
  // With `trace`, every file the processes open (and every program they run) is written there: what runs needs.
  const command =
    options.trace === undefined ? sandboxed : ['strace', '-f', '-qq', '-e', 'trace=open,openat,execve', '-e', 'signal=none', '-o', options.trace, ...sandboxed];
  const child = spawn(command[0] as string, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const descendants = () => descendantsOf(child.pid as number);
  return {
    child,
    output: () => output,
    exited,
    descendants,
    async stop() {
      const tini = descendants().find((pid) => commandLine(pid)[0] === config.Entrypoint[0] && commandLine(pid).length > 1);
      if (tini !== undefined) process.kill(tini, 'SIGTERM');
      else child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A process's argv, from /proc (empty once it is gone). */
export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((part) => part !== '');
  } catch {
    return [];
  }
}

/** Real, effective, saved and filesystem uid of a process, from /proc. */
export function uidsOf(pid: number): number[] {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('Uid:'));
  return (line ?? '').split(/\s+/).slice(1).filter(Boolean).map(Number);
}

function descendantsOf(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const visit = (pid: number) => {
    for (const [child, parent] of parents)
      if (parent === pid) {
        found.push(child);
        visit(child);
      }
  };
  visit(root);
  return found;
}

/**
 * The files the traced processes opened or ran, that are regular files of the root filesystem (their paths are the
 * sandbox's own), with their sizes: what the image needs at run time for what the trace exercised.
 */
export function openedFiles(traces: readonly string[], rootfs: string): Map<string, number> {
  const files = new Map<string, number>();
  for (const trace of traces)
    for (const match of readFileSync(trace, 'utf8').matchAll(/(?:open|openat|execve)\((?:AT_FDCWD, |\d+, )?"([^"]+)"[^\n]*\) = \d+/g)) {
      const path = match[1] as string;
      if (!path.startsWith('/') || files.has(path)) continue;
      try {
        const stat = statSync(join(rootfs, path));
        if (stat.isFile()) files.set(path, stat.size);
      } catch {
        // Not in the image (the host's /etc/hosts, /proc, /dev).
      }
    }
  return files;
}
