import type { Clock } from '@platform/kit/clock';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import { type Address, encodeFunctionData, type Hex } from 'viem';
import { withdrawalKey, withdrawalProof } from '../balances/withdrawal-tree.ts';
import type { SettlementSchema, WithdrawalTable } from '../db/schema.ts';
import { TxRefused, type TxSender } from './tx-sender.ts';
import { vaultAbi } from './vault-contracts.ts';
import type { VaultReader } from './vault-reader.ts';

/** At most this many payouts are sent per step; the rest follow on the next (nonces in order, never a flood). */
const perStep = 64;
const maxRetryDelayMs = 60 * 60 * 1000;

type Due = WithdrawalTable & { batch: bigint; withdrawal_tree: unknown };

/**
 * Pays withdrawals from the vault once the batch that burned them is anchored: `pending` → `broadcast` (a
 * transaction carries it) → `confirmed`, or `failed` (it would revert, or reverted) and retried with a growing
 * delay. The vault pays each withdrawal id at most once, and is asked first (at a confirmed block): a payout that
 * landed before a crash is recorded from its event, never sent again.
 */
export class Payouts {
  readonly #db: Kysely<SettlementSchema>;
  readonly #vault: VaultReader;
  readonly #sender: TxSender;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #retryBaseMs: number;

  constructor(options: { db: Kysely<SettlementSchema>; vault: VaultReader; sender: TxSender; clock: Clock; logger: Logger; retryBaseMs: number }) {
    this.#db = options.db;
    this.#vault = options.vault;
    this.#sender = options.sender;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#retryBaseMs = options.retryBaseMs;
  }

  /** One step over the unpaid withdrawals of anchored batches. Returns true when a payout was sent or recorded. */
  async step(): Promise<boolean> {
    const due = (
      await sql<Due>`
      select w.*, b.number as batch, b.withdrawal_tree
      from withdrawals w
      join batches b on w.seq between b.first_seq and b.last_seq
      where w.status <> 'confirmed' and b.anchor_status = 'confirmed'
      order by w.seq
      limit ${perStep}`.execute(this.#db)
    ).rows;
    if (due.length === 0) return false;
    const safe = await this.#vault.safeBlock();
    let moved = false;
    for (const withdrawal of due) moved = (await this.#one(withdrawal, safe)) || moved;
    return moved;
  }

  async #one(withdrawal: Due, safe: bigint): Promise<boolean> {
    const key = withdrawalKey(withdrawal.id) as Hex;
    const batch = BigInt(withdrawal.batch);
    if (await this.#vault.read('withdrawalPaid', [key], safe)) {
      const found = await this.#vault.findEvent('WithdrawalPaid', { withdrawalId: key });
      await this.#mark(withdrawal.id, {
        status: 'confirmed',
        tx_hash: found?.hash ?? withdrawal.tx_hash,
        block_number: found?.blockNumber ?? null,
        batch_number: batch,
      });
      this.#logger.info({ withdrawal: withdrawal.id, hash: found?.hash }, 'withdrawal paid');
      return true;
    }
    const open = await this.#sender.openFor('payout', withdrawal.id);
    if (open) {
      if (withdrawal.status !== 'broadcast' || withdrawal.tx_hash !== open.hash) await this.#mark(withdrawal.id, { status: 'broadcast', tx_hash: open.hash });
      return false;
    }
    if (withdrawal.status === 'broadcast') {
      // Its transaction ended without paying (reverted, or its nonce went elsewhere): failed, retried later.
      const ended = await this.#sender.lastEnded('payout', withdrawal.id);
      if (ended?.status === 'confirmed') return false;
      await this.#fail(withdrawal, ended?.error ?? 'the payout transaction ended without paying');
      return true;
    }
    if (withdrawal.status === 'failed' && !this.#retryDue(withdrawal)) return false;
    const proof = withdrawalProof(withdrawal.withdrawal_tree, withdrawal.id);
    if (!proof) {
      await this.#fail(withdrawal, `batch ${batch} has no leaf for this withdrawal`);
      return false;
    }
    const data = encodeFunctionData({
      abi: vaultAbi,
      functionName: 'payout',
      args: [key, proof.to as Address, BigInt(proof.amount), batch, proof.proof as Hex[]],
    });
    try {
      const sent = await this.#sender.submit({ purpose: 'payout', ref: withdrawal.id, to: this.#vault.address, data });
      await this.#mark(withdrawal.id, { status: 'broadcast', tx_hash: sent.hash, batch_number: batch });
      return true;
    } catch (error) {
      if (!(error instanceof TxRefused)) throw error;
      await this.#fail(withdrawal, error.message);
      return false;
    }
  }

  #retryDue(withdrawal: WithdrawalTable): boolean {
    const delay = Math.min(maxRetryDelayMs, this.#retryBaseMs * 2 ** Math.max(0, withdrawal.attempts - 1));
    const since = withdrawal.updated_at?.getTime() ?? 0;
    return this.#clock.now().getTime() - since >= delay;
  }

  async #fail(withdrawal: WithdrawalTable, error: string): Promise<void> {
    await this.#mark(withdrawal.id, { status: 'failed', attempts: withdrawal.attempts + 1, last_error: error });
    this.#logger.error({ withdrawal: withdrawal.id, attempts: withdrawal.attempts + 1, reason: error }, 'a payout failed; it will be tried again');
  }

  async #mark(id: string, changes: Partial<WithdrawalTable>): Promise<void> {
    await this.#db
      .updateTable('withdrawals')
      .set({ ...changes, updated_at: this.#clock.now() })
      .where('id', '=', id)
      .execute();
  }
}
