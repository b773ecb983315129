import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { formatAmount } from '@platform/kit/money';
import { type Kysely, sql } from 'kysely';
import { getAddress } from 'viem';
import { type BalanceTree, loadBalanceTree, zeroAddress } from '../balances/balance-tree.ts';
import { withdrawalProof } from '../balances/withdrawal-tree.ts';
import type { SettlementChain } from '../chain/settlement-chain.ts';
import type { SettlementSchema } from '../db/schema.ts';
import type { LogView } from '../ledger/log-view.ts';
import {
  type AccountView,
  accountView,
  type BatchSummary,
  batchSummaryColumns,
  batchView,
  holdView,
  signedReceiptOf,
  transferView,
  withdrawalView,
} from '../ledger/views.ts';

type Db = Kysely<SettlementSchema>;

const hex = (bytes: Buffer) => `0x${bytes.toString('hex')}`;
/** Balance trees kept parsed for proofs: the latest batches are the ones asked about. */
const treeCacheSize = 4;

/**
 * Every public read. Reads never go through the sequencer: they see committed rows only, so a standby
 * answers them as well as the sequencer does.
 */
export class LedgerReads {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: LogView;
  readonly #chain: SettlementChain;
  readonly #sequencerKey: string;
  readonly #trees = new Map<string, BalanceTree>();

  constructor(deps: { db: Db; clock: Clock; log: LogView; chain: SettlementChain; sequencerKey: string }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#chain = deps.chain;
    this.#sequencerKey = deps.sequencerKey;
  }

  async account(did: string): Promise<AccountView | undefined> {
    const row = await this.#db.selectFrom('accounts').selectAll().where('did', '=', did).executeTakeFirst();
    if (!row) return undefined;
    // What counterparties can still capture: open holds not yet past expiry (an expired one only awaits its sweep).
    const bound = await this.#db
      .selectFrom('holds')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint>('amount'), sql<bigint>`0`).as('total'))
      .where('payer', '=', did)
      .where('status', '=', 'open')
      .where('expires_at', '>', this.#clock.now())
      .executeTakeFirst();
    return accountView(row, BigInt(bound?.total ?? 0n));
  }

  /** The account's open holds, as payer or payee, newest first; `before` is a `created_seq` (paging). */
  async openHolds(did: string, page: { limit: number; before?: number | undefined }) {
    let select = this.#db
      .selectFrom('holds')
      .selectAll()
      .where('status', '=', 'open')
      .where((eb) => eb.or([eb('payer', '=', did), eb('payee', '=', did)]))
      .orderBy('created_seq', 'desc')
      .limit(page.limit + 1);
    if (page.before !== undefined) select = select.where('created_seq', '<', BigInt(page.before));
    const rows = await select.execute();
    const shown = rows.slice(0, page.limit);
    return { holds: shown.map(holdView), next_before: rows.length > page.limit ? Number(shown.at(-1)?.created_seq) : null };
  }

  async hold(id: string) {
    const row = await this.#db.selectFrom('holds').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? holdView(row) : undefined;
  }

  /** Newest first; `before` is an exclusive seq; `next_before` is null on the last page. */
  async transfers(query: { limit: number; before?: number | undefined; did?: string | undefined }) {
    let select = this.#db.selectFrom('receipts').select(['seq', 'kind', 'from_did', 'to_did', 'amount', 'ref', 'hold_id', 'at']);
    if (query.before !== undefined) select = select.where('seq', '<', BigInt(query.before));
    if (query.did !== undefined) {
      const did = query.did;
      select = select.where((eb) => eb.or([eb('from_did', '=', did), eb('to_did', '=', did)]));
    }
    const rows = await select
      .orderBy('seq', 'desc')
      .limit(query.limit + 1)
      .execute();
    const page = rows.slice(0, query.limit).map(transferView);
    return { transfers: page, next_before: rows.length > query.limit ? (page.at(-1)?.seq ?? null) : null };
  }

  /** The signed receipt; once a batch covers it, the inclusion proof against that batch's checkpoint and its anchor. */
  async receipt(seq: number) {
    const row = await this.#db.selectFrom('receipts').selectAll().where('seq', '=', BigInt(seq)).executeTakeFirst();
    if (!row) return undefined;
    const batch = await this.#db
      .selectFrom('batches')
      .select(batchSummaryColumns)
      .where('log_size', '>=', BigInt(seq))
      .orderBy('number')
      .limit(1)
      .executeTakeFirst();
    const receipt = signedReceiptOf(row, this.#sequencerKey);
    // A withdraw receipt says where its payout stands (pending, broadcast, confirmed, failed).
    const withdrawal = row.kind === 'withdraw' ? await this.#db.selectFrom('withdrawals').selectAll().where('seq', '=', row.seq).executeTakeFirst() : undefined;
    const payout = withdrawal ? { withdrawal: withdrawalView(withdrawal) } : {};
    if (!batch) return { receipt, leaf_index: seq - 1, batch: null, inclusion_proof: null, ...payout };
    const size = Number(batch.log_size);
    await this.#log.ensure(this.#db, size);
    return {
      receipt,
      leaf_index: seq - 1,
      batch: batchView(batch, this.#chain),
      inclusion_proof: this.#log.cache.inclusionProof(seq - 1, size).map(hex),
      ...payout,
    };
  }

  /** RFC 9162 consistency proof between two log sizes, both at most the latest checkpoint's. */
  async consistency(from: number, to: number | undefined) {
    const latest = await this.latestBatch();
    const checkpointed = latest ? Number(latest.log_size) : 0;
    const newSize = to ?? checkpointed;
    if (from < 1 || from > newSize) throw new ServiceError('invalid_request', `from must be from 1 to ${newSize}`);
    if (newSize > checkpointed) throw new ServiceError('invalid_request', `to must be at most ${checkpointed}, the latest checkpointed size`);
    await this.#log.ensure(this.#db, newSize);
    return { from, to: newSize, proof: this.#log.cache.consistencyProof(from, newSize).map(hex) };
  }

  async latestBatch(): Promise<BatchSummary | undefined> {
    return this.#db.selectFrom('batches').select(batchSummaryColumns).orderBy('number', 'desc').limit(1).executeTakeFirst();
  }

  async batches(query: { limit: number; before?: number | undefined }) {
    let select = this.#db.selectFrom('batches').select(batchSummaryColumns);
    if (query.before !== undefined) select = select.where('number', '<', BigInt(query.before));
    const rows = await select
      .orderBy('number', 'desc')
      .limit(query.limit + 1)
      .execute();
    const page = rows.slice(0, query.limit).map((row) => batchView(row, this.#chain));
    return { batches: page, next_before: rows.length > query.limit ? (page.at(-1)?.number ?? null) : null };
  }

  async batch(id: string) {
    const row = await this.#db.selectFrom('batches').select(batchSummaryColumns).where('id', '=', id).executeTakeFirst();
    return row ? batchView(row, this.#chain) : undefined;
  }

  /** The anchor record of a batch, found by either of its roots (receipt log or balance tree). */
  async anchor(root: string) {
    const row = await this.#db
      .selectFrom('batches')
      .select(batchSummaryColumns)
      .where((eb) => eb.or([eb('log_root', '=', root), eb('balance_root', '=', root)]))
      .orderBy('number')
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    const view = batchView(row, this.#chain);
    return {
      root,
      batch_id: view.id,
      batch_number: view.number,
      log_size: view.log_size,
      log_root: view.log_root,
      balance_root: view.balance_root,
      checkpoint: view.checkpoint,
      ...view.anchor,
    };
  }

  /** An account's leaf and proof in a batch's balance tree, checkable with @openzeppelin/merkle-tree. */
  async balanceProof(batchId: string, did: string) {
    const tree = await this.#tree(batchId);
    if (!tree) return undefined;
    const found = tree.proofFor(did);
    if (!found) throw new ServiceError('not_found', 'this DID has no leaf in the batch: it had no account when the window closed');
    return {
      batch_id: batchId,
      balance_root: tree.root,
      did,
      amount: formatAmount(found.leaf.micros),
      payout_address: found.leaf.payout === zeroAddress ? null : getAddress(found.leaf.payout),
      leaf: { tag: found.leaf.tag, account: found.leaf.account, payout: found.leaf.payout, balance: found.leaf.micros.toString(), hash: found.leaf.hash },
      proof: found.proof,
    };
  }

  /**
   * A withdrawal, and once the batch that burned it is anchored, what the vault's `payout` takes: the batch number
   * and the proof against its withdrawals root (after a freeze anyone may submit it; it pays only the address named).
   */
  async withdrawal(id: string) {
    const row = await this.#db.selectFrom('withdrawals').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    const batch = await this.#db
      .selectFrom('batches')
      .select(['number', 'anchor_status', 'withdrawal_tree'])
      .where('first_seq', '<=', row.seq)
      .where('last_seq', '>=', row.seq)
      .executeTakeFirst();
    const proof = batch?.withdrawal_tree ? withdrawalProof(batch.withdrawal_tree, id) : undefined;
    return {
      withdrawal: withdrawalView(row),
      batch_number: batch ? Number(batch.number) : null,
      anchored: batch?.anchor_status === 'confirmed',
      payout: proof ? { ...proof, batch: batch ? Number(batch.number) : null } : null,
    };
  }

  async #tree(batchId: string): Promise<BalanceTree | undefined> {
    const cached = this.#trees.get(batchId);
    if (cached) return cached;
    const row = await this.#db.selectFrom('batches').select('balance_tree').where('id', '=', batchId).executeTakeFirst();
    if (!row) return undefined;
    const tree = loadBalanceTree(typeof row.balance_tree === 'string' ? JSON.parse(row.balance_tree) : row.balance_tree);
    this.#trees.set(batchId, tree);
    if (this.#trees.size > treeCacheSize) this.#trees.delete(this.#trees.keys().next().value as string);
    return tree;
  }

  /** Supply (every balance and hold) beside the reserve that backs it (see the chain's `supply`). */
  supply() {
    return this.#chain.supply();
  }
}
