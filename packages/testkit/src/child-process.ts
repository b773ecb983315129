import { type ChildProcess, fork } from 'node:child_process';
import { applyServiceV8Flags } from '@platform/kit/v8-flags';

/*
 * A benchmark part in a process of its own, driven over IPC: the service under test and the load generator
 * each get their own event loop (and their own core when the OS allows), so neither one's CPU is counted as
 * the other's. The parent asks `{op, args}` and awaits the child's answer.
 */

type Handler = (args: never) => unknown;
export type Handlers = Record<string, Handler>;

interface Request {
  id: number;
  op: string;
  args: unknown;
}
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };
interface Ready {
  ready: true;
  info: unknown;
}

export interface Child<H extends Handlers, Info> {
  /** What the child sent once ready (the service's URL, say). */
  info: Info;
  ask<Op extends keyof H & string>(op: Op, ...args: Parameters<H[Op]>): Promise<Awaited<ReturnType<H[Op]>>>;
  /** SIGKILL if still running; safe to call twice. */
  kill(): void;
  /** Settles when the process has exited. */
  exited: Promise<void>;
  process: ChildProcess;
}

const live = new Set<ChildProcess>();
// A bench that dies half way must not leave a service holding the temp database (or a load generator running).
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Forks `file` with `arg` (JSON) and waits for its ready message; `execArgv` adds node flags (--cpu-prof).
 *
 * @example const load = await forkChild<typeof handlers, null>(fileURLToPath(import.meta.url), null); await load.ask('run', { seconds: 5 });
 */
export async function forkChild<H extends Handlers, Info>(file: string, arg: unknown, execArgv: string[] = []): Promise<Child<H, Info>> {
  const child = fork(file, [JSON.stringify(arg)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...process.execArgv, ...execArgv] });
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => live.delete(child));
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const info = await new Promise<Info>((resolve, reject) => {
    child.once('message', (message: Ready) => resolve(message.info as Info));
    child.once('exit', (code, signal) => reject(new Error(`${file} exited with ${code ?? signal} before it was ready`)));
  });
  child.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.ok) waiter?.resolve(reply.value);
    else waiter?.reject(new Error(reply.error));
  });
  child.on('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${file} exited with ${code ?? signal}`));
    pending.clear();
  });
  let nextId = 0;
  return {
    info,
    process: child,
    exited,
    ask: (op, ...args) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, op, args: args[0] } satisfies Request);
      }),
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/**
 * The child's side: answers each request with its handler's result, after announcing `info`. The child exits
 * when the parent goes away.
 *
 * @example if (import.meta.main) serveChild({ run: (args: { seconds: number }) => run(args.seconds) }, { pid: process.pid });
 */
export function serveChild(handlers: Handlers, info: unknown): void {
  // A bench's child runs its service as `platform` runs it (the load generators and stand-ins too: no harm there).
  applyServiceV8Flags();
  process.on('message', async (request: Request) => {
    try {
      const handler = handlers[request.op];
      if (!handler) throw new Error(`unknown op ${request.op}`);
      const value = await handler(request.args as never);
      process.send?.({ id: request.id, ok: true, value } satisfies Reply);
    } catch (error) {
      process.send?.({ id: request.id, ok: false, error: (error as Error).stack ?? String(error) } satisfies Reply);
    }
  });
  // The parent going away (crash, Ctrl-C) ends the child too.
  process.on('disconnect', () => process.exit(0));
  process.send?.({ ready: true, info } satisfies Ready);
}
