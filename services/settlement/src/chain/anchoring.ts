import type { Clock } from '@platform/kit/clock';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type Address, encodeFunctionData, type Hex, zeroHash } from 'viem';
import type { SettlementSchema } from '../db/schema.ts';
import { TxRefused, type TxSender } from './tx-sender.ts';
import { vaultAbi } from './vault-contracts.ts';
import type { VaultReader } from './vault-reader.ts';

/**
 * Anchors every closed batch, in order, from the sequencer's EVM key. The vault takes batch n only right after
 * n − 1, so a batch can never be anchored twice; and before sending, the vault itself is asked how far it is (at
 * a confirmed block), so an anchor that landed before a crash is recorded from its event instead of being sent
 * again, and one still waiting in a stored transaction is left to the sender. When there is nothing to anchor for
 * a quarter of the force-withdraw delay, a heartbeat keeps an idle but living sequencer from being frozen out.
 */
export class Anchoring {
  readonly #db: Kysely<SettlementSchema>;
  readonly #vault: VaultReader;
  readonly #sender: TxSender;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #forceWithdrawDelay: bigint | undefined;
  #lastRefusal = '';
  /** Set when the vault is behind the ledger in a way anchoring cannot mend (a reset development chain). */
  stuck: string | undefined;
  /** The batch waiting for its anchor, the confirmed block at which a step first saw it wait, and at the last step. */
  #waiting: { number: bigint; since: bigint; latest: bigint } | undefined;

  constructor(options: { db: Kysely<SettlementSchema>; vault: VaultReader; sender: TxSender; clock: Clock; logger: Logger }) {
    this.#db = options.db;
    this.#vault = options.vault;
    this.#sender = options.sender;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  /** One step: records or sends the next anchor. Returns true when something moved (worth another step at once). */
  async step(): Promise<boolean> {
    const batch = await this.#db
      .selectFrom('batches')
      .select(['number', 'balance_root', 'log_root', 'log_size', 'withdrawals_root', 'deposits_covered', 'anchor_status', 'anchor_tx_hash'])
      .where('anchor_status', '<>', 'confirmed')
      .orderBy('number')
      .limit(1)
      .executeTakeFirst();
    if (!batch) {
      this.#waiting = undefined;
      await this.#heartbeatIfDue();
      return false;
    }
    const safe = await this.#vault.safeBlock();
    this.#waiting = this.#waiting?.number === batch.number ? { ...this.#waiting, latest: safe } : { number: batch.number, since: safe, latest: safe };
    const anchored = await this.#vault.read('lastBatch', [], safe);
    if (anchored >= batch.number) {
      await this.#recordFromChain(batch.number);
      return true;
    }
    const open = await this.#sender.openFor('anchor', batch.number.toString());
    if (open) {
      if (batch.anchor_status !== 'broadcast' || batch.anchor_tx_hash !== open.hash)
        await this.#mark(batch.number, { anchor_status: 'broadcast', anchor_tx_hash: open.hash });
      return false;
    }
    // Mined but not yet confirmed deep enough shows as "not anchored" above; the sender's row says it is on its way.
    const latest = await this.#vault.read('lastBatch', []);
    if (latest >= batch.number) return false;
    if (latest + 1n < batch.number) {
      this.stuck = `the vault's last anchored batch is ${latest}, but the ledger's next is ${batch.number}: the vault does not hold this ledger's history (was the chain reset?)`;
      this.#logger.error({ vault: this.#vault.address, anchored: latest.toString(), next: batch.number.toString() }, this.stuck);
      return false;
    }
    const data = encodeFunctionData({
      abi: vaultAbi,
      functionName: 'anchor',
      args: [
        batch.number,
        batch.balance_root as Hex,
        batch.log_root as Hex,
        batch.log_size,
        (batch.withdrawals_root ?? zeroHash) as Hex,
        batch.deposits_covered,
      ],
    });
    try {
      const sent = await this.#sender.submit({ purpose: 'anchor', ref: batch.number.toString(), to: this.#vault.address, data });
      await this.#mark(batch.number, { anchor_status: 'broadcast', anchor_tx_hash: sent.hash });
      this.#logger.info({ batch: batch.number.toString(), hash: sent.hash }, 'anchoring a batch');
      return true;
    } catch (error) {
      if (!(error instanceof TxRefused)) throw error;
      // Tried again next step; said once per distinct reason, not every poll.
      if (error.message !== this.#lastRefusal) this.#logger.error({ batch: batch.number.toString(), reason: error.message }, 'an anchor could not be sent');
      this.#lastRefusal = error.message;
      return false;
    }
  }

  /**
   * Blocks the oldest batch not yet anchored has waited, from the step that first saw it to the last step (0 when
   * none waits). A batch is seen at once (the sequencer nudges the loop when it writes one), so this counts from its
   * close, to within a poll.
   */
  lagBlocks(): number {
    const waiting = this.#waiting;
    return waiting === undefined ? 0 : Number(waiting.latest - waiting.since);
  }

  async #recordFromChain(number: bigint): Promise<void> {
    const found = await this.#vault.findEvent('Anchored', { batch: number });
    await this.#mark(number, {
      anchor_status: 'confirmed',
      anchor_tx_hash: found?.hash ?? null,
      anchor_block: found?.blockNumber ?? null,
      anchor_gas_used: found?.gasUsed ?? null,
    });
    this.#logger.info({ batch: number.toString(), hash: found?.hash, block: found?.blockNumber?.toString() }, 'batch anchored');
  }

  async #heartbeatIfDue(): Promise<void> {
    this.#forceWithdrawDelay ??= await this.#vault.read('forceWithdrawDelay', []);
    const lastAnchorAt = await this.#vault.read('lastAnchorAt', []);
    const ref = lastAnchorAt.toString();
    if (await this.#sender.openFor('heartbeat', ref)) return;
    const now = BigInt(Math.floor(this.#clock.now().getTime() / 1000));
    const block = await this.#vaultTime();
    const chainNow = block > now ? block : now;
    if (chainNow - lastAnchorAt < this.#forceWithdrawDelay / 4n) return;
    const data = encodeFunctionData({ abi: vaultAbi, functionName: 'heartbeat', args: [] });
    try {
      await this.#sender.submit({ purpose: 'heartbeat', ref, to: this.#vault.address as Address, data });
      this.#logger.info({ lastAnchorAt: ref }, 'no batch to anchor for a while: sent a heartbeat');
    } catch (error) {
      if (!(error instanceof TxRefused)) throw error;
      this.#logger.error({ reason: error.message }, 'a heartbeat could not be sent');
    }
  }

  /** The latest block's timestamp: the vault's clock, which a development node may have moved ahead of ours. */
  async #vaultTime(): Promise<bigint> {
    return (await this.#vault.latestBlock()).timestamp;
  }

  async #mark(
    number: bigint,
    changes: Partial<{ anchor_status: 'broadcast' | 'confirmed'; anchor_tx_hash: string | null; anchor_block: bigint | null; anchor_gas_used: bigint | null }>,
  ) {
    await this.#db.updateTable('batches').set(changes).where('number', '=', number).execute();
  }
}
