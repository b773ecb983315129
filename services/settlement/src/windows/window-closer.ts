import { uuidv7 } from '@platform/kit/ids';
import { signCheckpoint } from '@platform/kit/receipt-log/checkpoint';
import { type Kysely, sql } from 'kysely';
import type { BatchTable, SettlementSchema } from '../db/schema.ts';
import type { CryptoWorker } from '../ledger/crypto-worker.ts';
import type { SequencerKey } from '../ledger/ledger-key.ts';
import type { LogView } from '../ledger/log-view.ts';

/** Where the last batch left the log; the open window is everything after it. */
export interface WindowState {
  lastBatchNumber: bigint;
  /** Log size covered by the last batch (0 before the first). */
  closedSize: number;
  /** When the open window's first receipt was issued; null while the window is empty. */
  openedAt: Date | null;
}

export interface CloseDeps {
  db: Kysely<SettlementSchema>;
  log: LogView;
  key: SequencerKey;
  now: Date;
  /** Builds the balance tree off the request thread. */
  crypto: CryptoWorker;
}

/** A batch ready to write: everything but its place in the event log, which the writer gives it as it writes it. */
export type BuiltBatch = Omit<BatchTable, 'event_id'>;

export async function readWindowState(db: Kysely<SettlementSchema>): Promise<WindowState> {
  const last = await db.selectFrom('batches').select(['number', 'log_size']).orderBy('number', 'desc').limit(1).executeTakeFirst();
  const closedSize = Number(last?.log_size ?? 0n);
  const first = await db
    .selectFrom('receipts')
    .select('at')
    .where('seq', '=', BigInt(closedSize + 1))
    .executeTakeFirst();
  return { lastBatchNumber: last?.number ?? 0n, closedSize, openedAt: first?.at ?? null };
}

/**
 * Closes the open window into a batch: the signed checkpoint of the receipt log at `logSize`, the balance
 * tree over every account, and the anchor the chain would receive. It starts on the single writer between
 * groups, so the accounts it reads are exactly the state after receipt `logSize`; once that snapshot is taken it
 * returns, and `built` finishes the row (the tree is built on the crypto worker) while later groups go on. The
 * writer writes it, in order with its group commits (sequencer.ts). Returns undefined when the window is empty:
 * no empty batches.
 *
 * A leaf's amount is balance + held: what the account could take out through the vault's forced
 * withdrawal if the sequencer vanished (its own open holds return to it), so the leaves add up to supply.
 */
export async function closeWindow(
  deps: CloseDeps,
  state: WindowState,
  logSize: number,
  reason: string,
): Promise<{ number: bigint; built: Promise<BuiltBatch> } | undefined> {
  if (logSize <= state.closedSize || state.openedAt === null) return undefined;
  await deps.log.ensure(deps.db, logSize);
  const rootHash = deps.log.cache.root(logSize);
  const checkpoint = signCheckpoint({ origin: deps.key.origin, treeSize: logSize, rootHash }, deps.key.noteSigner);
  const accounts = await deps.db.selectFrom('accounts').select(['did', 'balance', 'held', 'payout_address']).execute();
  const withdrawals = await deps.db
    .selectFrom('withdrawals')
    .select(['id', 'payout_address', 'amount'])
    .where('seq', '>', BigInt(state.closedSize))
    .where('seq', '<=', BigInt(logSize))
    .execute();
  const depositsCovered = await depositsSeen(deps.db);
  const openedAt = state.openedAt;
  const number = state.lastBatchNumber + 1n;
  return {
    number,
    built: buildBatch(deps, {
      accounts,
      withdrawals,
      depositsCovered,
      openedAt,
      number,
      first: state.closedSize + 1,
      logSize,
      rootHash,
      checkpoint,
      reason,
    }),
  };
}

/**
 * How many vault deposits the ledger has taken in: the watcher handles them in index order, crediting each or
 * setting it aside as unclaimed before the next, so every index below this count is in the balances (or unclaimed)
 * and none above it is. The vault refunds deposits from this index on after a freeze.
 */
export async function depositsSeen(db: Kysely<SettlementSchema>): Promise<bigint> {
  const { rows } = await sql<{ next: string | null }>`
    select greatest((select max(chain_index) from deposits), (select max(chain_index) from unclaimed_deposits)) + 1 as next`.execute(db);
  return rows[0]?.next === null || rows[0]?.next === undefined ? 0n : BigInt(rows[0].next);
}

async function buildBatch(
  deps: CloseDeps,
  snapshot: {
    accounts: Array<{ did: string; balance: bigint; held: bigint; payout_address: string | null }>;
    withdrawals: Array<{ id: string; payout_address: string; amount: bigint }>;
    depositsCovered: bigint;
    openedAt: Date;
    number: bigint;
    first: number;
    logSize: number;
    rootHash: Buffer;
    checkpoint: string;
    reason: string;
  },
): Promise<BuiltBatch> {
  const { accounts, withdrawals, depositsCovered, openedAt, number, first, logSize, rootHash, checkpoint, reason } = snapshot;
  const tree = await deps.crypto.balanceTree(
    accounts.map((account) => ({ did: account.did, payout: account.payout_address, micros: account.balance + account.held })),
  );
  const burned = await deps.crypto.withdrawalTree(
    withdrawals.map((withdrawal) => ({ id: withdrawal.id, to: withdrawal.payout_address, micros: withdrawal.amount })),
  );
  return {
    id: uuidv7(deps.now.getTime()),
    number,
    first_seq: BigInt(first),
    last_seq: BigInt(logSize),
    opened_at: openedAt,
    closed_at: deps.now,
    reason,
    log_size: BigInt(logSize),
    log_root: `0x${rootHash.toString('hex')}`,
    balance_root: tree.root,
    account_count: tree.size,
    checkpoint,
    balance_tree: tree.dump,
    anchor_status: 'recorded',
    anchor_tx_hash: null,
    anchor_block: null,
    withdrawals_root: burned?.root ?? null,
    withdrawal_tree: burned?.dump ?? null,
    deposits_covered: depositsCovered,
    anchor_gas_used: null,
  };
}
