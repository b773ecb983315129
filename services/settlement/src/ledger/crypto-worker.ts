import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { BalanceInput, BalanceTreeDump } from '../balances/balance-tree.ts';
import type { WithdrawalInput, WithdrawalTreeDump } from '../balances/withdrawal-tree.ts';
import type { CryptoReply, CryptoRequest } from './crypto-thread.ts';

type Body<R> = R extends unknown ? Omit<R, 'id'> : never;

/**
 * The sequencer's CPU-heavy work on a thread of its own: ed25519 signatures over receipts (about a third of
 * the writer's time per pay when done inline) and the balance tree of a window close (seconds for a large
 * ledger). The request thread keeps serving HTTP meanwhile. One worker: requests are answered in order.
 */
export class CryptoWorker {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #nextId = 1;
  #failure: Error | undefined;

  constructor(privateKey: KeyObject) {
    this.#worker = new Worker(new URL('./crypto-thread.ts', import.meta.url));
    // Not a reason to keep the process alive on its own.
    this.#worker.unref();
    this.#worker.on('message', (reply: CryptoReply) => {
      const waiter = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (reply.ok) waiter?.resolve(reply.value);
      else waiter?.reject(new Error(`crypto worker: ${reply.message}`));
    });
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => this.#fail(new Error(`crypto worker exited with code ${code}`)));
    // A failure here (the worker gone before it answered) surfaces on the next call; nothing waits on this one.
    this.#call({ op: 'key', privateKey }).catch(() => undefined);
  }

  /** ed25519 signatures (128 hex) over each message, in order. */
  sign(messages: readonly Uint8Array[]): Promise<string[]> {
    // One buffer moved to the worker, not one clone per message: a small Buffer is a view on Node's 8 KiB pool,
    // and cloning it copies the whole pool slab.
    const ends = new Uint32Array(messages.length);
    let size = 0;
    for (let i = 0; i < messages.length; i++) {
      size += (messages[i] as Uint8Array).length;
      ends[i] = size;
    }
    const bytes = new Uint8Array(size);
    for (let i = 0; i < messages.length; i++) bytes.set(messages[i] as Uint8Array, i === 0 ? 0 : (ends[i - 1] as number));
    return this.#call({ op: 'sign', bytes, ends }, [bytes.buffer, ends.buffer]) as Promise<string[]>;
  }

  balanceTree(balances: BalanceInput[]): Promise<{ root: string; size: number; dump: BalanceTreeDump }> {
    return this.#call({ op: 'tree', balances }) as Promise<{ root: string; size: number; dump: BalanceTreeDump }>;
  }

  /** The tree of a window's withdrawals; null when there were none. */
  withdrawalTree(withdrawals: WithdrawalInput[]): Promise<{ root: string; dump: WithdrawalTreeDump } | null> {
    return this.#call({ op: 'withdrawals', withdrawals }) as Promise<{ root: string; dump: WithdrawalTreeDump } | null>;
  }

  async close(): Promise<void> {
    this.#failure ??= new Error('crypto worker closed');
    await this.#worker.terminate();
  }

  #call(body: Body<CryptoRequest>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#worker.postMessage({ ...body, id }, transfer);
    });
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiter of this.#waiting.values()) waiter.reject(error);
    this.#waiting.clear();
  }
}
