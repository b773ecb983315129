import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startWakeSink, type WakeSink, type WakeSinkOptions } from './wake-sink.ts';

/*
 * The wake sink in a process of its own. In the contender's process the sink's HTTP parsing competes with the
 * contender for the same event loop, so a burst measured the two together; a real receiver is another process
 * (the router). The parent speaks to the child over IPC and keeps the child's figures from the last waitFor.
 */

type Request = { id: number; op: 'reset' } | { id: number; op: 'waitFor'; count: number; timeoutMs: number } | { id: number; op: 'close' };
interface Snapshot {
  received: number;
  lateness: number[];
  lastReceivedAt: number;
  duplicates: number;
}
type Reply = { id: number; ok: true; snapshot: Snapshot } | { id: number; ok: false; error: string };
type Ready = { ready: true; url: string };

const empty: Snapshot = { received: 0, lateness: [], lastReceivedAt: 0, duplicates: 0 };

/** Starts the sink in a child process; the returned object has the in-process sink's interface. */
export async function startWakeSinkProcess(options: WakeSinkOptions = {}): Promise<WakeSink> {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: Ready) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`wake sink process exited with ${code}`)));
  });
  let snapshot = empty;
  let nextId = 0;
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  child.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.ok) {
      snapshot = reply.snapshot;
      waiter?.resolve();
    } else waiter?.reject(new Error(reply.error));
  });
  const ask = (request: Omit<Request, 'id'> & { op: Request['op'] }): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ ...request, id });
    });
  return {
    url,
    received: () => snapshot.received,
    lateness: () => snapshot.lateness.slice(),
    lastReceivedAt: () => snapshot.lastReceivedAt,
    duplicates: () => snapshot.duplicates,
    reset() {
      snapshot = empty;
      void ask({ op: 'reset' });
    },
    waitFor: (count, timeoutMs) => ask({ op: 'waitFor', count, timeoutMs } as Request),
    async close() {
      await ask({ op: 'close' });
      child.disconnect();
    },
  };
}

async function serveAsChild(): Promise<void> {
  const sink = await startWakeSink(JSON.parse(process.argv[2] ?? '{}') as WakeSinkOptions);
  const snap = (): Snapshot => ({ received: sink.received(), lateness: sink.lateness(), lastReceivedAt: sink.lastReceivedAt(), duplicates: sink.duplicates() });
  process.on('message', async (request: Request) => {
    try {
      if (request.op === 'reset') sink.reset();
      if (request.op === 'waitFor') await sink.waitFor(request.count, request.timeoutMs);
      if (request.op === 'close') await sink.close();
      process.send?.({ id: request.id, ok: true, snapshot: snap() } satisfies Reply);
    } catch (error) {
      process.send?.({ id: request.id, ok: false, error: (error as Error).message } satisfies Reply);
    }
  });
  process.send?.({ ready: true, url: sink.url } satisfies Ready);
}

if (import.meta.main) await serveAsChild();
