import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';

/*
 * Children a process stops itself, in its own order, at shutdown (the local chain node, the daemons the router starts)
 * run in a process group of their own (`detached`): a terminal's Ctrl-C goes to the whole foreground group, and would
 * otherwise kill them at once, before the services that still use them have stopped. Out of the group, they must still
 * never outlive this process, however it ends (SIGKILL, a crash): one small watcher (`sh`, in its own group too) reads
 * the ids of the bound groups from a pipe only this process holds; when the pipe closes, this process is gone, and the
 * watcher sends SIGTERM to every group still bound, SIGKILL after a grace, and exits. A child stopped in its turn is
 * unbound when it exits, so after a clean shutdown the watcher finds nothing to do and exits at once.
 */

/** How long a bound group has, after SIGTERM, before the watcher kills it (a daemon drains its step in flight). */
export const boundGraceSeconds = 10;

// Lines `+<pgid>` bind, `-<pgid>` unbind; at end of input, what is still bound is stopped. `kill -0 -<pgid>` (no `--`: dash refuses it)
// asks whether any process of the group is left.
const watcherScript = `
bound=" "
while IFS= read -r line; do
  case "$line" in
    +*) bound="$bound\${line#+} " ;;
    -*) kept=" "; for p in $bound; do [ "$p" = "\${line#-}" ] || kept="$kept$p "; done; bound=$kept ;;
  esac
done
[ -z "\${bound# }" ] && exit 0
for p in $bound; do kill -TERM "-$p" 2>/dev/null; done
i=0
while [ $i -lt ${boundGraceSeconds * 10} ]; do
  left=""
  for p in $bound; do kill -0 "-$p" 2>/dev/null && left="$left $p"; done
  [ -z "$left" ] && exit 0
  sleep 0.1
  i=$((i + 1))
done
for p in $left; do kill -KILL "-$p" 2>/dev/null; done
`;

let watcher: ChildProcess | undefined;

function theWatcher(): ChildProcess {
  if (watcher !== undefined) return watcher;
  // The pipe's end here is close-on-exec (libuv), so no other child inherits it and keeps the watcher waiting.
  const started = spawn('/bin/sh', ['-c', watcherScript], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  // It must not keep this process alive, nor fail it when it is gone (EPIPE).
  started.unref();
  (started.stdin as Socket).unref();
  started.stdin?.on('error', () => undefined);
  watcher = started;
  return started;
}

/**
 * Spawns a child in its own process group, bound to this process: it does not receive the terminal's signals meant
 * for this process's group, and is stopped (SIGTERM to its group, SIGKILL after {@link boundGraceSeconds}) as soon as
 * this process is gone, whatever the cause. Stopping it in order stays the caller's job.
 *
 * @example const anvil = spawnBound(binary, ['--port', '8545'], { stdio: ['ignore', 'pipe', 'pipe'] });
 */
export function spawnBound(command: string, args: readonly string[], options: Parameters<typeof spawn>[2] = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  if (child.pid !== undefined) bindGroup(child);
  return child;
}

/** Binds an already started child that leads its own process group (spawned `detached`), as {@link spawnBound} does. */
export function bindGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  const line = (text: string) => {
    const watching = theWatcher();
    if (watching.exitCode === null && watching.signalCode === null) watching.stdin?.write(`${text}\n`);
  };
  line(`+${pid}`);
  child.once('exit', () => line(`-${pid}`));
}
