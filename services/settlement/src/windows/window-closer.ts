import { uuidv7 } from '@platform/kit/ids';
import type { Kysely } from 'kysely';
import type { SettlementChain } from '../chain/settlement-chain.ts';
import type { BatchTable, SettlementSchema } from '../db/schema.ts';
import type { CryptoWorker } from '../ledger/crypto-worker.ts';
import { writeRows } from '../ledger/group-store.ts';
import type { SequencerKey } from '../ledger/ledger-key.ts';
import type { LogView } from '../ledger/log-view.ts';
import { signCheckpoint } from '../receipts/checkpoint.ts';
import { anchorEventId } from '../stream/event-log.ts';

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
  chain: SettlementChain;
  now: Date;
  /** Builds the balance tree off the request thread. */
  crypto: CryptoWorker;
}

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
 * tree over every account, and the anchor the chain would receive, written in one statement. It starts on the
 * single writer between groups, so the accounts it reads are exactly the state after receipt `logSize`; once
 * that snapshot is taken it returns, and `written` finishes the batch (the tree is built on the crypto worker)
 * while later groups go on. Returns undefined when the window is empty: no empty batches.
 *
 * A leaf's amount is balance + held: what the account could take out through the vault's forced
 * withdrawal if the sequencer vanished (its own open holds return to it), so the leaves add up to supply.
 */
export async function closeWindow(
  deps: CloseDeps,
  state: WindowState,
  logSize: number,
  reason: string,
): Promise<{ number: bigint; written: Promise<BatchTable> } | undefined> {
  if (logSize <= state.closedSize || state.openedAt === null) return undefined;
  await deps.log.ensure(deps.db, logSize);
  const rootHash = deps.log.cache.root(logSize);
  const checkpoint = signCheckpoint({ origin: deps.key.origin, treeSize: logSize, rootHash }, deps.key.noteSigner);
  const accounts = await deps.db.selectFrom('accounts').select(['did', 'balance', 'held']).execute();
  const openedAt = state.openedAt;
  const number = state.lastBatchNumber + 1n;
  return { number, written: finishBatch(deps, { accounts, openedAt, number, first: state.closedSize + 1, logSize, rootHash, checkpoint, reason }) };
}

async function finishBatch(
  deps: CloseDeps,
  snapshot: {
    accounts: Array<{ did: string; balance: bigint; held: bigint }>;
    openedAt: Date;
    number: bigint;
    first: number;
    logSize: number;
    rootHash: Buffer;
    checkpoint: string;
    reason: string;
  },
): Promise<BatchTable> {
  const { accounts, openedAt, number, first, logSize, rootHash, checkpoint, reason } = snapshot;
  const tree = await deps.crypto.balanceTree(accounts.map((account) => ({ did: account.did, micros: account.balance + account.held })));
  const row: BatchTable = {
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
  };
  const anchor = {
    id: uuidv7(deps.now.getTime()),
    kind: 'anchor',
    payload: {
      batch_id: row.id,
      log_size: logSize,
      log_root: row.log_root,
      balance_root: row.balance_root,
      chain_id: deps.chain.chainId,
      contract: deps.chain.anchorAddress,
    },
    status: 'recorded',
    created_at: deps.now,
  };
  await writeRows(deps.db, { batches: [row], chain_outbox: [anchor] }, anchorEventId(row.log_size));
  return row;
}
