import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { CompileProduct } from './compile-product.ts';
import type { SolcReady, SolcReply, SolcRequest } from './solc-thread.ts';
import type { CompileSettings, SourceMap } from './sources.ts';

/** A compile that ran past its time limit: its thread was replaced, since solc cannot be interrupted. */
export class CompileTimeoutError extends Error {
  constructor(ms: number) {
    super(`compile took longer than ${ms} ms`);
    this.name = 'CompileTimeoutError';
  }
}

interface Job {
  request: Omit<SolcRequest, 'id'>;
  resolve: (product: CompileProduct) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  job: (Job & { timer: NodeJS.Timeout }) | undefined;
}

/**
 * solc-js on worker threads kept warm: each loads the compiler once at start and then compiles one project at a
 * time, so the request thread never runs solc. Jobs queue here and go to the first idle thread. A thread that
 * overruns `timeoutMs` or dies is replaced by a fresh one.
 */
export class SolcWorkers {
  readonly #threads: Thread[] = [];
  readonly #queue: Job[] = [];
  readonly #size: number;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  #nextId = 1;
  #closed = false;

  /** Threads start on the first compile or `warm()`, so an engine that never compiles never loads solc. */
  constructor(options: { threads: number; timeoutMs: number; logger: Logger }) {
    this.#size = options.threads;
    this.#timeoutMs = options.timeoutMs;
    this.#logger = options.logger;
  }

  compile(sources: SourceMap, settings: CompileSettings, buildHash: string): Promise<CompileProduct> {
    if (this.#closed) return Promise.reject(new Error('compiler closed'));
    this.#start();
    return new Promise((resolve, reject) => {
      this.#queue.push({ request: { op: 'compile', sources, settings, buildHash }, resolve, reject });
      this.#dispatch();
    });
  }

  /** Resolves once every thread has loaded solc (start-up waits for it so the first compile is warm). */
  async warm(): Promise<void> {
    this.#start();
    await Promise.all(this.#threads.map((thread) => (thread.ready ? undefined : once(thread.worker))));
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new Error('compiler closed'));
    await Promise.all(this.#threads.map((thread) => thread.worker.terminate()));
  }

  #start(): void {
    while (this.#threads.length < this.#size) this.#threads.push(this.#spawn());
  }

  #spawn(): Thread {
    // The thread's stdout is not ours to share: under the MCP stdio server, stdout is the protocol channel.
    const worker = new Worker(new URL('./solc-thread.ts', import.meta.url), { stdout: true });
    worker.stdout.on('data', (chunk: Buffer) => this.#logger.warn({ output: chunk.toString('utf8').slice(0, 2000) }, 'solc thread wrote to stdout'));
    worker.unref();
    const thread: Thread = { worker, ready: false, job: undefined };
    worker.on('message', (message: SolcReply | SolcReady) => {
      if ('ready' in message) {
        thread.ready = true;
        this.#dispatch();
        return;
      }
      const job = thread.job;
      if (!job) return;
      clearTimeout(job.timer);
      thread.job = undefined;
      if (message.ok) job.resolve(message.value);
      else job.reject(new Error(`solc: ${message.message}`));
      this.#dispatch();
    });
    worker.on('error', (error) => this.#replace(thread, error));
    worker.on('exit', (code) => this.#replace(thread, new Error(`solc thread exited with code ${code}`)));
    return thread;
  }

  #dispatch(): void {
    for (const thread of this.#threads) {
      if (!thread.ready || thread.job || this.#queue.length === 0) continue;
      const job = this.#queue.shift() as Job;
      const timer = setTimeout(() => this.#replace(thread, new CompileTimeoutError(this.#timeoutMs)), this.#timeoutMs);
      thread.job = { ...job, timer };
      thread.worker.postMessage({ ...job.request, id: this.#nextId++ } satisfies SolcRequest);
    }
  }

  #replace(thread: Thread, error: Error): void {
    const index = this.#threads.indexOf(thread);
    if (index === -1) return;
    const job = thread.job;
    thread.job = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.reject(error);
    }
    if (this.#closed) return;
    this.#logger.warn({ err: error }, 'replacing the solc thread');
    thread.worker.removeAllListeners();
    void thread.worker.terminate();
    this.#threads[index] = this.#spawn();
  }
}

function once(worker: Worker): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if (typeof message === 'object' && message !== null && 'ready' in message) {
        worker.off('message', onMessage);
        resolve();
      }
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
}
