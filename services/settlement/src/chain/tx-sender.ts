import { setTimeout } from 'node:timers/promises';
import type { ChainNode } from '@platform/kit/chain/chain-node';
import { gasLimitFor } from '@platform/kit/chain/gas';
import type { Clock } from '@platform/kit/clock';
import { uuidv7 } from '@platform/kit/ids';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  type Abi,
  type Address,
  BaseError,
  decodeErrorResult,
  type Hex,
  HttpRequestError,
  keccak256,
  parseTransaction,
  TimeoutError,
  TransactionReceiptNotFoundError,
} from 'viem';
import type { ChainTransactionTable, SettlementSchema } from '../db/schema.ts';

export interface TxRequest {
  /** What it does (anchor, payout, heartbeat, faucet…) and what for (a batch number, a withdrawal id…). */
  purpose: string;
  ref: string;
  to: Address;
  data: Hex;
}

export type TxOutcome = { status: 'confirmed'; hash: Hex; blockNumber: bigint; gasUsed: bigint } | { status: 'failed'; error: string };

/** A transaction that was never sent: it would revert, or the node refused it. Nothing is left behind. */
export class TxRefused extends Error {}

export interface SenderSettings {
  confirmations: number;
  feeBumpMs: number;
  maxFeePerGasWei: bigint;
}

type OpenRow = ChainTransactionTable;

/**
 * Sends the sequencer's transactions and sees them to `confirmations` blocks. Every transaction is signed and
 * stored (nonce, raw bytes, hash) before it is broadcast, so a process killed at any point finds it on restart,
 * broadcasts the same bytes again if the node lost them, and never signs a second transaction for the same nonce
 * unless it is a fee bump (same nonce, so at most one of them can be mined). Submissions are serialised: each
 * takes the next nonce only once the previous one was accepted by the node, so a refusal never leaves a gap.
 * Tracking is separate: many transactions can wait for blocks at once.
 */
export class TxSender {
  readonly #db: Kysely<SettlementSchema>;
  readonly #node: ChainNode;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #settings: SenderSettings;
  readonly #abi: Abi;
  readonly #waiters = new Map<string, Array<(outcome: TxOutcome) => void>>();
  #nonce: bigint | undefined;
  #submitting: Promise<unknown> = Promise.resolve();
  #tracking: Promise<unknown> = Promise.resolve();
  /** Told whenever a transaction reaches its end (the chain loops then look again at once). */
  onSettled: (() => void) | undefined;

  constructor(options: { db: Kysely<SettlementSchema>; node: ChainNode; clock: Clock; logger: Logger; settings: SenderSettings; abi: Abi }) {
    this.#db = options.db;
    this.#node = options.node;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#settings = options.settings;
    this.#abi = options.abi;
  }

  /** Forgets the nonce (read again from the chain and the table before the next submission): on taking over. */
  reset(): void {
    this.#nonce = undefined;
  }

  /** Ends every transaction still in flight as failed: they were signed for a chain that is gone (a reset development node). */
  async abandonOpen(reason: string): Promise<void> {
    await this.#db
      .updateTable('chain_transactions')
      .set({ status: 'failed', error: reason, updated_at: this.#clock.now() })
      .where('status', 'in', ['sent', 'mined'])
      .execute();
    this.#nonce = undefined;
  }

  /** Signs, stores and broadcasts; resolves with the row id and hash once the node has it. Throws TxRefused. */
  submit(request: TxRequest): Promise<{ id: string; hash: Hex }> {
    const run = this.#submitting.then(() => this.#submit(request));
    this.#submitting = run.catch(() => undefined);
    return run;
  }

  /** Resolves when the transaction is confirmed or has failed (reverted, or its nonce went to another). */
  waitFor(id: string): Promise<TxOutcome> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(id) ?? [];
      list.push(resolve);
      this.#waiters.set(id, list);
      void this.#finalOutcome(id).then((outcome) => outcome && this.#settle(id, outcome));
    });
  }

  /**
   * Submits and waits for the end, tracking on its own meanwhile (a node mines even "instantly" a moment after it
   * accepts). Gives up after `patienceMs` with undefined: the transaction goes on, tracked by the chain loop.
   */
  async send(request: TxRequest, patienceMs = 60_000): Promise<TxOutcome | undefined> {
    const { id } = await this.submit(request);
    const ended = this.waitFor(id);
    const deadline = Date.now() + patienceMs;
    for (let delay = 5; Date.now() < deadline; delay = Math.min(delay * 2, 500)) {
      await this.track();
      const outcome = await Promise.race([ended, setTimeout(delay, undefined)]);
      if (outcome) return outcome;
    }
    return undefined;
  }

  /** The open transaction for (purpose, ref), if one is in flight. */
  async openFor(purpose: string, ref: string): Promise<{ id: string; hash: string } | undefined> {
    const row = await this.#db
      .selectFrom('chain_transactions')
      .select(['id', 'hashes'])
      .where('purpose', '=', purpose)
      .where('ref', '=', ref)
      .where('status', 'in', ['sent', 'mined'])
      .executeTakeFirst();
    return row ? { id: row.id, hash: (row.hashes as string[]).at(-1) as string } : undefined;
  }

  /** The latest transaction for (purpose, ref) that ended, for its error. */
  async lastEnded(purpose: string, ref: string): Promise<Pick<ChainTransactionTable, 'status' | 'error' | 'updated_at'> | undefined> {
    return this.#db
      .selectFrom('chain_transactions')
      .select(['status', 'error', 'updated_at'])
      .where('purpose', '=', purpose)
      .where('ref', '=', ref)
      .where('status', 'in', ['confirmed', 'failed'])
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** One pass over every open transaction: receipts, confirmations, reorgs, fee bumps. Passes never overlap. */
  track(): Promise<void> {
    const run = this.#tracking.then(() => this.#track());
    this.#tracking = run.catch(() => undefined);
    return run;
  }

  async #track(): Promise<void> {
    const open = await this.#db.selectFrom('chain_transactions').selectAll().where('status', 'in', ['sent', 'mined']).orderBy('nonce').execute();
    if (open.length === 0) return;
    const { client } = this.#node;
    const head = await this.#node.blockNumber();
    const used = BigInt(await client.getTransactionCount({ address: this.#node.account.address, blockTag: 'latest' }));
    for (const row of open) {
      try {
        await this.#trackOne(row, head, used);
      } catch (error) {
        this.#logger.warn({ err: error, tx: row.id, purpose: row.purpose, ref: row.ref }, 'tracking a transaction failed; trying again next pass');
      }
    }
  }

  async #trackOne(row: OpenRow, head: bigint, used: bigint): Promise<void> {
    const { client } = this.#node;
    const hashes = row.hashes as Hex[];
    let receipt: Awaited<ReturnType<typeof client.getTransactionReceipt>> | undefined;
    for (const hash of [...hashes].reverse()) {
      receipt = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
        if (error instanceof TransactionReceiptNotFoundError) return undefined;
        throw error;
      });
      if (receipt) break;
    }
    const now = this.#clock.now();
    if (receipt) {
      const mined = { mined_hash: receipt.transactionHash, block_number: receipt.blockNumber, gas_used: receipt.gasUsed, updated_at: now };
      if (receipt.status === 'reverted') return this.#end(row.id, { ...mined, status: 'failed', error: 'reverted on chain' });
      if (head - receipt.blockNumber + 1n < BigInt(this.#settings.confirmations)) {
        if (row.status !== 'mined') await this.#update(row.id, { ...mined, status: 'mined' });
        return;
      }
      // Deep enough; and still in the chain the node follows (a reorg would have moved it or dropped it).
      const block = await client.getBlock({ blockNumber: receipt.blockNumber });
      if (block.hash !== receipt.blockHash) return;
      return this.#end(row.id, { ...mined, status: 'confirmed', error: null });
    }
    if (used > row.nonce) {
      // The nonce is used, yet no receipt: a node counts the nonce a moment before it serves the receipt, so ask
      // for the transaction itself; only when the node knows none of ours did someone else send with this key.
      for (const hash of hashes) if (await client.getTransaction({ hash }).catch(() => undefined)) return;
      return this.#end(row.id, { status: 'failed', error: 'the nonce was used by another transaction', updated_at: now });
    }
    if (row.status === 'mined') {
      this.#logger.warn({ tx: row.id, purpose: row.purpose }, 'a mined transaction left the chain (reorg); broadcasting it again');
      await this.#update(row.id, { status: 'sent', mined_hash: null, block_number: null, gas_used: null, updated_at: now });
      await this.#broadcast(row.raw as Hex);
      return;
    }
    if (now.getTime() - row.updated_at.getTime() >= this.#settings.feeBumpMs) await this.#bump(row, now);
  }

  /** Replaces a transaction that waits too long with the same one at higher fees (or sends it again at the cap). */
  async #bump(row: OpenRow, now: Date): Promise<void> {
    const oldMax = BigInt(row.max_fee_per_gas);
    const oldTip = BigInt(row.max_priority_fee_per_gas);
    const current = await this.#node.client.estimateFeesPerGas();
    const cap = this.#settings.maxFeePerGasWei;
    // Nodes take a replacement only at +10% on both fees; 25% leaves room for rounding.
    const maxFeePerGas = min(cap, max(current.maxFeePerGas, (oldMax * 125n) / 100n));
    const maxPriorityFeePerGas = min(maxFeePerGas, max(current.maxPriorityFeePerGas, (oldTip * 125n) / 100n));
    if (maxFeePerGas * 100n < oldMax * 110n || maxPriorityFeePerGas * 100n < oldTip * 110n) {
      this.#logger.warn({ tx: row.id, purpose: row.purpose, cap: cap.toString() }, 'a transaction waits at the fee cap; broadcasting it again');
      await this.#update(row.id, { updated_at: now });
      await this.#broadcast(row.raw as Hex);
      return;
    }
    // The same call as before, read back from the stored bytes (the node may have dropped it).
    const previous = parseTransaction(row.raw as Hex);
    const raw = await this.#sign({
      to: previous.to ?? undefined,
      data: previous.data,
      gas: previous.gas,
      nonce: row.nonce,
      maxFeePerGas,
      maxPriorityFeePerGas,
    });
    const hash = keccak256(raw);
    await this.#update(row.id, {
      hashes: JSON.stringify([...(row.hashes as string[]), hash]) as unknown as string[],
      raw,
      max_fee_per_gas: maxFeePerGas.toString(),
      max_priority_fee_per_gas: maxPriorityFeePerGas.toString(),
      updated_at: now,
    });
    this.#logger.info(
      { tx: row.id, purpose: row.purpose, ref: row.ref, hash, maxFeePerGas: maxFeePerGas.toString() },
      'bumped the fees of a waiting transaction',
    );
    await this.#broadcast(raw);
  }

  async #sign(fields: {
    to: Address | undefined;
    data: Hex | undefined;
    gas: bigint | undefined;
    nonce: bigint;
    maxFeePerGas: bigint;
    maxPriorityFeePerGas: bigint;
  }): Promise<Hex> {
    if (fields.to === undefined || fields.data === undefined || fields.gas === undefined) throw new Error('a transaction needs to, data and gas');
    return this.#node.wallet.signTransaction({
      account: this.#node.account,
      chain: this.#node.chain,
      type: 'eip1559',
      to: fields.to,
      data: fields.data,
      gas: fields.gas,
      nonce: Number(fields.nonce),
      maxFeePerGas: fields.maxFeePerGas,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
    });
  }

  async #submit(request: TxRequest): Promise<{ id: string; hash: Hex }> {
    const { client, account } = this.#node;
    let gas: bigint;
    try {
      gas = await client.estimateGas({ account, to: request.to, data: request.data });
    } catch (error) {
      throw new TxRefused(`${request.purpose} ${request.ref} would fail: ${this.#describe(error)}`);
    }
    const fees = await client.estimateFeesPerGas();
    const cap = this.#settings.maxFeePerGasWei;
    const maxFeePerGas = min(fees.maxFeePerGas, cap);
    const maxPriorityFeePerGas = min(fees.maxPriorityFeePerGas, maxFeePerGas);
    this.#nonce ??= await this.#firstFreeNonce();
    const nonce = this.#nonce;
    const raw = await this.#sign({ to: request.to, data: request.data, gas: gasLimitFor(gas), nonce, maxFeePerGas, maxPriorityFeePerGas });
    const hash = keccak256(raw);
    const id = uuidv7(this.#clock.now().getTime());
    const now = this.#clock.now();
    await this.#db
      .insertInto('chain_transactions')
      .values({
        id,
        purpose: request.purpose,
        ref: request.ref,
        nonce,
        hashes: JSON.stringify([hash]) as unknown as string[],
        raw,
        max_fee_per_gas: maxFeePerGas.toString(),
        max_priority_fee_per_gas: maxPriorityFeePerGas.toString(),
        status: 'sent',
        mined_hash: null,
        block_number: null,
        gas_used: null,
        error: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    this.#nonce = nonce + 1n;
    const refusal = await this.#broadcast(raw);
    if (refusal !== undefined) {
      // Refused outright: the nonce was not used, so the next submission takes it.
      this.#nonce = nonce;
      await this.#end(id, { status: 'failed', error: `the node refused it: ${refusal}`, updated_at: this.#clock.now() });
      throw new TxRefused(`${request.purpose} ${request.ref} was refused by the node: ${refusal}`);
    }
    return { id, hash };
  }

  /** Broadcasts; returns the node's refusal, or undefined when it took it (or may have: a timeout is tried again later). */
  async #broadcast(raw: Hex): Promise<string | undefined> {
    try {
      await this.#node.client.sendRawTransaction({ serializedTransaction: raw });
      return undefined;
    } catch (error) {
      const message = this.#describe(error);
      if (/already known|known transaction|already imported|nonce too low/i.test(message)) return undefined;
      if (error instanceof BaseError && (error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) ?? undefined)) return undefined;
      return message;
    }
  }

  async #firstFreeNonce(): Promise<bigint> {
    const pending = BigInt(await this.#node.client.getTransactionCount({ address: this.#node.account.address, blockTag: 'pending' }));
    // Only transactions still in flight can hold a nonce the node does not count yet; ended ones are mined or were refused.
    const recorded = await this.#db
      .selectFrom('chain_transactions')
      .select((eb) => eb.fn.max('nonce').as('nonce'))
      .where('status', 'in', ['sent', 'mined'])
      .executeTakeFirst();
    const next = recorded?.nonce === null || recorded?.nonce === undefined ? 0n : BigInt(recorded.nonce) + 1n;
    return max(pending, next);
  }

  async #finalOutcome(id: string): Promise<TxOutcome | undefined> {
    const row = await this.#db.selectFrom('chain_transactions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return { status: 'failed', error: 'unknown transaction' };
    if (row.status === 'confirmed')
      return { status: 'confirmed', hash: row.mined_hash as Hex, blockNumber: row.block_number as bigint, gasUsed: row.gas_used as bigint };
    if (row.status === 'failed') return { status: 'failed', error: row.error ?? 'failed' };
    return undefined;
  }

  async #end(id: string, changes: Partial<ChainTransactionTable>): Promise<void> {
    await this.#update(id, changes);
    const outcome = await this.#finalOutcome(id);
    if (outcome) this.#settle(id, outcome);
    this.onSettled?.();
  }

  #settle(id: string, outcome: TxOutcome): void {
    for (const resolve of this.#waiters.get(id) ?? []) resolve(outcome);
    this.#waiters.delete(id);
  }

  async #update(id: string, changes: Partial<ChainTransactionTable>): Promise<void> {
    await this.#db.updateTable('chain_transactions').set(changes).where('id', '=', id).execute();
  }

  /** A short reason: the vault's custom error by name when the node returned one, else viem's short message. */
  #describe(error: unknown): string {
    if (!(error instanceof BaseError)) return error instanceof Error ? error.message : String(error);
    let data: Hex | undefined;
    error.walk((cause) => {
      const candidate = (cause as { data?: unknown }).data;
      if (typeof candidate === 'string' && /^0x[0-9a-f]{8}/i.test(candidate)) data = candidate as Hex;
      else if (typeof candidate === 'object' && candidate !== null && typeof (candidate as { data?: unknown }).data === 'string')
        data = (candidate as { data: Hex }).data;
      return false;
    });
    if (data !== undefined) {
      try {
        const decoded = decodeErrorResult({ abi: this.#abi, data });
        return `${decoded.errorName}(${(decoded.args ?? []).map(String).join(', ')})`;
      } catch {
        // Not one of ours: fall through to the message.
      }
    }
    return error.shortMessage;
  }
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
