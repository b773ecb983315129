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
    if (this.#calls > 1) return this.#offload().verify(publicKeyHex, message, signatureHex);
    const key = publicKeyFromHex(publicKeyHex);
    return key !== undefined && verifyMessage(key, message, signatureHex);
  }

  /** The marketplace DID key's signature over `message`. */
  sign(message: string): string | Promise<string> {
    return this.#calls > 1 ? this.#offload().sign(message) : this.#agent.sign(message);
  }

  async close(): Promise<void> {
    await this.#worker?.close();
  }

  // Started on first use: a marketplace that never serves overlapping calls (most tests) never starts a thread.
  #offload(): Ed25519Worker {
    this.#worker ??= new Ed25519Worker({ signingSeedHex: this.#agent.seedHex });
    return this.#worker;
  }
}
