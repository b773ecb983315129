import type { AgentKey } from '@platform/client/agent-key';
import { publicKeyFromHex, verifyMessage } from '@platform/kit/auth/ed25519';
import { Ed25519Worker } from '@platform/kit/auth/ed25519-worker';

/**
 * The ed25519 work of paid calls: checking a voucher's signature and signing each provider call with the
 * marketplace's DID key. The process's one request thread is what bounds the voucher rail, and these were a sixth
 * of its time, so while calls overlap they go to a worker thread (one message per turn of the event loop); a call
 * served alone does them inline, as a thread hop would only add to its latency.
 */
export class Signatures {
  readonly #agent: AgentKey;
  #worker: Ed25519Worker | undefined;
  #calls = 0;

  constructor(agent: AgentKey) {
    this.#agent = agent;
  }

  /** The marketplace's DID, whose key signs. */
  get did(): string {
    return this.#agent.did;
  }

  /** Counts a call while it is served: the signatures of overlapping calls go to the worker. */
  async during<T>(call: () => Promise<T>): Promise<T> {
    this.#calls++;
    try {
      return await call();
    } finally {
      this.#calls--;
    }
  }

  /** Whether `signatureHex` is the key's signature over `message` (false for malformed input). */
  verify(publicKeyHex: string, message: string, signatureHex: string): boolean | Promise<boolean> {
    const inline = () => {
      const key = publicKeyFromHex(publicKeyHex);
      return key !== undefined && verifyMessage(key, message, signatureHex);
    };
    return this.#calls > 1 ? this.#offloaded((worker) => worker.verify(publicKeyHex, message, signatureHex), inline) : inline();
  }

  /** The marketplace DID key's signature over `message`. */
  sign(message: string): string | Promise<string> {
    const inline = () => this.#agent.sign(message);
    return this.#calls > 1 ? this.#offloaded((worker) => worker.sign(message), inline) : inline();
  }

  async close(): Promise<void> {
    await this.#worker?.close();
  }

  /**
   * On the worker, started on first use (a marketplace that never serves overlapping calls, most tests, never starts
   * a thread). A worker that failed is dropped and the job done inline: its failure never fails a call.
   */
  async #offloaded<T>(job: (worker: Ed25519Worker) => Promise<T>, inline: () => T): Promise<T> {
    this.#worker ??= new Ed25519Worker({ signingSeedHex: this.#agent.seedHex });
    const worker = this.#worker;
    try {
      return await job(worker);
    } catch {
      if (this.#worker === worker) {
        this.#worker = undefined;
        void worker.close().catch(() => undefined);
      }
      return inline();
    }
  }
}
