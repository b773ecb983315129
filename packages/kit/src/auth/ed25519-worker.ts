import { Worker } from 'node:worker_threads';
import type { Ed25519Answer, Ed25519Job } from './ed25519-thread.ts';

type Waiter = { resolve: (value: boolean | string | null) => void; reject: (error: Error) => void };

/**
 * ed25519 on a thread of its own, for a process whose request thread is its bottleneck: a verification costs the
 * request thread about 120 µs inline and about 6 µs here, because the jobs of one turn of the event loop go to
 * the worker in one message (measured on our 2-core machines, 8–32 in flight). Each job waits for a thread hop,
 * so a caller with nothing else to do is better served inline (see the marketplace's `Signatures`).
 *
 * @example const worker = new Ed25519Worker({ signingSeedHex }); const ok = await worker.verify(publicHex, text, signature)
 */
export class Ed25519Worker {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, Waiter>();
  #batch: Ed25519Job[] = [];
  #nextId = 1;
  #failure: Error | undefined;

  /** `signingSeedHex`: the key `sign` signs with (64 hex). */
  constructor(options: { signingSeedHex?: string } = {}) {
    this.#worker = new Worker(new URL('./ed25519-thread.ts', import.meta.url), {
      workerData: options.signingSeedHex === undefined ? {} : { seedHex: options.signingSeedHex },
    });
    // Not a reason to keep the process alive on its own.
    this.#worker.unref();
    this.#worker.on('message', (answers: Ed25519Answer[]) => {
      for (const [id, value] of answers) {
        this.#waiting.get(id)?.resolve(value);
        this.#waiting.delete(id);
      }
    });
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => this.#fail(new Error(`ed25519 worker exited with code ${code}`)));
  }

  /** Whether `signatureHex` is the key's ed25519 signature over the UTF-8 `message`; false for malformed input. */
  async verify(publicKeyHex: string, message: string, signatureHex: string): Promise<boolean> {
    return (await this.#submit((id) => [id, 'verify', publicKeyHex, message, signatureHex])) === true;
  }

  /** The signing key's ed25519 signature (128 hex) over the UTF-8 `message`. */
  async sign(message: string): Promise<string> {
    const signature = await this.#submit((id) => [id, 'sign', message]);
    if (typeof signature !== 'string') throw new Error('ed25519 worker: no signing key');
    return signature;
  }

  async close(): Promise<void> {
    await this.#worker.terminate();
  }

  #submit(job: (id: number) => Ed25519Job): Promise<boolean | string | null> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#batch.push(job(id));
      // Sent after this turn's I/O callbacks: every request read in this turn joins one message.
      if (this.#batch.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    if (this.#failure) for (const [id] of batch) this.#reject(id, this.#failure);
    else this.#worker.postMessage(batch);
  }

  #reject(id: number, error: Error): void {
    this.#waiting.get(id)?.reject(error);
    this.#waiting.delete(id);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const id of [...this.#waiting.keys()]) this.#reject(id, this.#failure);
  }
}
