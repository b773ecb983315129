import type { ChainNode } from '@platform/kit/chain/chain-node';
import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Hex } from 'viem';
import type { SettlementSchema } from '../db/schema.ts';
import type { DepositCommand } from '../ledger/commands.ts';
import { depositsSeen } from '../windows/window-closer.ts';
import { vaultAbi } from './vault-contracts.ts';
import type { VaultReader } from './vault-reader.ts';

const cursorName = 'deposit_watcher';
/** Blocks per log query: nodes cap the range of eth_getLogs. */
const blockRange = 2_000n;

interface Cursor {
  /** The last block whose deposits were all taken in. */
  block: bigint;
  /** Its hash when it was read, to notice a reorg deeper than the confirmations. */
  hash: string | null;
}

/**
 * Credits the vault's deposits once they have `confirmations` blocks: each exactly once (the ledger is idempotent on
 * transaction hash and log index, and the vault numbers deposits, so a deposit seen twice is recognised by its
 * index), in the vault's order, through the sequencer's ordinary deposit command. A deposit whose DID hash no claim
 * names yet is set aside as unclaimed and credited when that DID asks for its deposit instructions. The cursor is
 * kept in the database. A reorg shallower than the confirmations never reaches the ledger (nothing that shallow is
 * credited); a deeper one that replaced a block whose deposits were credited raises the alarm, since credits are
 * not taken back.
 */
export class DepositWatcher {
  readonly #db: Kysely<SettlementSchema>;
  readonly #node: ChainNode;
  readonly #vault: VaultReader;
  readonly #credit: (command: DepositCommand) => Promise<unknown>;
  readonly #paused: () => boolean;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #cursor: Cursor | undefined;
  /** Set (for good) when the chain did something the ledger cannot follow. */
  alarm: string | undefined;

  constructor(options: {
    db: Kysely<SettlementSchema>;
    node: ChainNode;
    vault: VaultReader;
    credit: (command: DepositCommand) => Promise<unknown>;
    /** True while deposits must not be credited (an alarm stands elsewhere). */
    paused: () => boolean;
    clock: Clock;
    logger: Logger;
  }) {
    this.#paused = options.paused;
    this.#db = options.db;
    this.#node = options.node;
    this.#vault = options.vault;
    this.#credit = options.credit;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  /** Forgets the cached cursor (read again from the database): on taking over from another instance. */
  reset(): void {
    this.#cursor = undefined;
  }

  /**
   * Checks the cursor before anything moves on: the block it names is still the chain's (else a reorg deeper than
   * the confirmations), and the vault's deposit count at that block is exactly what was taken in. A node can name a
   * block as its head a moment before it serves that block's logs and state, so the last step may have read the
   * newest block short; by now that block is settled, and a shortfall rewinds the cursor to read it again.
   * Returns the block through which the ledger holds every deposit and nothing later (the block to check the
   * reserve at), or undefined when that is not known this step.
   */
  async verify(): Promise<bigint | undefined> {
    this.#cursor ??= await this.#readCursor();
    const cursor = this.#cursor;
    if (this.alarm) return undefined;
    if (cursor.hash !== null) {
      const block = await this.#node.client.getBlock({ blockNumber: cursor.block }).catch(() => undefined);
      if (block?.hash !== cursor.hash) {
        this.alarm = `block ${cursor.block} changed after its deposits were credited: a reorg deeper than the confirmations`;
        this.#logger.fatal({ block: cursor.block.toString(), was: cursor.hash, now: block?.hash }, this.alarm);
        return undefined;
      }
    }
    // Before the vault's first block there is nothing to hold or check.
    if (cursor.block < this.#vault.fromBlock) return undefined;
    const [count, seen] = await Promise.all([this.#vault.read('depositCount', [], cursor.block), depositsSeen(this.#db)]);
    if (seen === count) return cursor.block;
    if (seen > count) return undefined;
    const last = await this.#lastSeenBlock();
    this.#logger.warn(
      { block: cursor.block.toString(), seen: seen.toString(), count: count.toString() },
      'deposit logs were read before the node served them all: reading again',
    );
    await this.#saveCursor({ block: last ?? (this.#vault.fromBlock > 0n ? this.#vault.fromBlock - 1n : 0n), hash: null });
    return undefined;
  }

  /** One step: takes in the next confirmed range of deposits, then credits claimed ones. */
  async step(): Promise<void> {
    this.#cursor ??= await this.#readCursor();
    const cursor = this.#cursor;
    if (this.alarm || this.#paused()) return;
    const safe = await this.#vault.safeBlock();
    if (safe > cursor.block) {
      const to = safe < cursor.block + blockRange ? safe : cursor.block + blockRange;
      await this.#takeIn(cursor.block + 1n, to);
      if (this.alarm) return;
      const block = await this.#node.client.getBlock({ blockNumber: to });
      await this.#saveCursor({ block: to, hash: block.hash });
    }
    await this.#creditClaimed();
  }

  /** The block before the one holding the last deposit taken in: reading again from there misses none of its block. */
  async #lastSeenBlock(): Promise<bigint | undefined> {
    const { rows } = await sql<{ block: string | null }>`
      select greatest((select max(block_number) from deposits where chain_index is not null), (select max(block_number) from unclaimed_deposits)) as block`.execute(
      this.#db,
    );
    const block = rows[0]?.block;
    return block === null || block === undefined ? undefined : BigInt(block) - 1n;
  }

  async #takeIn(from: bigint, to: bigint): Promise<void> {
    const logs = await this.#node.client.getContractEvents({
      address: this.#vault.address,
      abi: vaultAbi,
      eventName: 'Deposited',
      fromBlock: from,
      toBlock: to,
    });
    logs.sort((a, b) => (a.blockNumber === b.blockNumber ? (a.logIndex ?? 0) - (b.logIndex ?? 0) : a.blockNumber < b.blockNumber ? -1 : 1));
    let expected = await depositsSeen(this.#db);
    for (const log of logs) {
      const { index, account, from: sender, amount } = log.args as { index: bigint; account: Hex; from: Hex; amount: bigint };
      if (index < expected) continue;
      if (index > expected) {
        this.alarm = `the vault's deposit ${index} arrived before deposit ${expected}`;
        this.#logger.fatal({ index: index.toString(), expected: expected.toString() }, this.alarm);
        return;
      }
      const deposit = {
        chainIndex: index,
        account: account.toLowerCase(),
        from: sender,
        amount,
        txHash: log.transactionHash as Hex,
        logIndex: log.logIndex as number,
        blockNumber: log.blockNumber,
      };
      const claim = await this.#db.selectFrom('deposit_claims').select('did').where('account_hash', '=', deposit.account).executeTakeFirst();
      if (claim && (await this.#creditTo(claim.did, deposit))) {
        expected += 1n;
        continue;
      }
      await this.#db
        .insertInto('unclaimed_deposits')
        .values({
          chain_index: index,
          account_hash: deposit.account,
          from_address: sender,
          amount,
          tx_hash: deposit.txHash,
          log_index: deposit.logIndex,
          block_number: deposit.blockNumber,
          seen_at: this.#clock.now(),
          credited_seq: null,
        })
        .onConflict((conflict) => conflict.column('chain_index').doNothing())
        .execute();
      if (!claim) this.#logger.warn({ index: index.toString(), account: deposit.account }, 'a vault deposit names no DID the ledger knows: kept unclaimed');
      expected += 1n;
    }
  }

  /** Credits a deposit; false when the ledger refuses it (the account would pass its limit), which leaves it unclaimed. */
  async #creditTo(
    did: string,
    deposit: { chainIndex: bigint; amount: bigint; txHash: Hex; logIndex: number; blockNumber: bigint },
  ): Promise<{ seq: number } | undefined> {
    try {
      const result = (await this.#credit({
        kind: 'deposit',
        did,
        micros: deposit.amount,
        source: 'chain',
        txHash: deposit.txHash,
        logIndex: deposit.logIndex,
        chainIndex: deposit.chainIndex,
        blockNumber: deposit.blockNumber,
      })) as { deposit: { seq: number } };
      return result.deposit;
    } catch (error) {
      if (!(error instanceof ServiceError) || error.code !== 'conflict') throw error;
      if ((error.details as { reason?: string } | undefined)?.reason === 'deposit_mismatch') {
        this.alarm = `vault deposit ${deposit.chainIndex} was credited before with another account or amount`;
        this.#logger.fatal({ index: deposit.chainIndex.toString() }, this.alarm);
      } else this.#logger.error({ index: deposit.chainIndex.toString(), did, reason: error.message }, 'a vault deposit could not be credited: kept unclaimed');
      return undefined;
    }
  }

  /** Unclaimed deposits whose DID has since asked for its deposit instructions. */
  async #creditClaimed(): Promise<void> {
    const waiting = await this.#db
      .selectFrom('unclaimed_deposits as u')
      .innerJoin('deposit_claims as c', 'c.account_hash', 'u.account_hash')
      .select(['u.chain_index', 'u.amount', 'u.tx_hash', 'u.log_index', 'u.block_number', 'c.did'])
      .where('u.credited_seq', 'is', null)
      .orderBy('u.chain_index')
      .limit(100)
      .execute();
    for (const row of waiting) {
      const credited = await this.#creditTo(row.did, {
        chainIndex: row.chain_index,
        amount: row.amount,
        txHash: row.tx_hash as Hex,
        logIndex: row.log_index,
        blockNumber: row.block_number,
      });
      if (!credited) continue;
      await this.#db
        .updateTable('unclaimed_deposits')
        .set({ credited_seq: BigInt(credited.seq) })
        .where('chain_index', '=', row.chain_index)
        .execute();
      this.#logger.info({ index: row.chain_index.toString(), did: row.did }, 'credited an unclaimed deposit to the DID that claimed it');
    }
  }

  async #readCursor(): Promise<Cursor> {
    const row = await this.#db.selectFrom('chain_state').select('value').where('name', '=', cursorName).executeTakeFirst();
    const value = row?.value as { block: string; hash: string | null } | undefined;
    if (value) return { block: BigInt(value.block), hash: value.hash };
    return { block: this.#vault.fromBlock > 0n ? this.#vault.fromBlock - 1n : 0n, hash: null };
  }

  async #saveCursor(cursor: Cursor): Promise<void> {
    const value = JSON.stringify({ block: cursor.block.toString(), hash: cursor.hash });
    await this.#db
      .insertInto('chain_state')
      .values({ name: cursorName, value, updated_at: this.#clock.now() })
      .onConflict((conflict) => conflict.column('name').doUpdateSet({ value, updated_at: this.#clock.now() }))
      .execute();
    this.#cursor = cursor;
  }
}
