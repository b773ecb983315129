import { formatAmount } from '@platform/kit/money';
import type { Receipt, SignedReceipt } from '@platform/kit/receipt-log/receipt';
import type { AccountTable, BatchTable, DepositTable, HoldTable, ReceiptTable, WithdrawalTable } from '../db/schema.ts';

/** The JSON shapes the routes answer with: amounts as 6-place decimal strings, times as ISO 8601, seqs as numbers. */

export interface AccountView {
  did: string;
  balance: string;
  held: string;
  escrow_bound: string;
  payout_address: string | null;
  created_at: string | null;
}

/** `escrowBound` is computed by the reader: the open holds this account pays that can still be captured. */
export function accountView(row: AccountTable, escrowBound: bigint): AccountView {
  return {
    did: row.did,
    balance: formatAmount(row.balance),
    held: formatAmount(row.held),
    escrow_bound: formatAmount(escrowBound),
    payout_address: row.payout_address,
    created_at: row.created_at.toISOString(),
  };
}

/** An account that has never been credited, as its owner sees it. */
export function emptyAccountView(did: string): AccountView {
  return { did, balance: formatAmount(0n), held: formatAmount(0n), escrow_bound: formatAmount(0n), payout_address: null, created_at: null };
}

export interface HoldView {
  id: string;
  payer: string;
  payee: string;
  amount: string;
  captured: string;
  returned: string;
  status: HoldTable['status'];
  ref: string;
  expires_at: string;
  created_at: string;
  closed_at: string | null;
  created_seq: number;
  closed_seq: number | null;
}

export function holdView(row: HoldTable): HoldView {
  return {
    id: row.id,
    payer: row.payer,
    payee: row.payee,
    amount: formatAmount(row.amount),
    captured: formatAmount(row.captured),
    returned: formatAmount(row.returned),
    status: row.status,
    ref: row.ref,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    closed_at: row.closed_at?.toISOString() ?? null,
    created_seq: Number(row.created_seq),
    closed_seq: row.closed_seq === null ? null : Number(row.closed_seq),
  };
}

/** One entry of the public transfer feed and the payload of a `transfer` stream event: the receipt's movement fields. */
export type TransferView = Omit<Receipt, 'v' | 'sequencer'>;

export function transferView(row: Pick<ReceiptTable, 'seq' | 'kind' | 'from_did' | 'to_did' | 'amount' | 'ref' | 'hold_id' | 'at'>): TransferView {
  return {
    seq: Number(row.seq),
    kind: row.kind,
    from: row.from_did,
    to: row.to_did,
    amount: formatAmount(row.amount),
    ref: row.ref,
    hold_id: row.hold_id,
    at: row.at.toISOString(),
  };
}

/** The signed receipt rebuilt from its row: the same ten fields it was signed over, plus the signature. */
export function signedReceiptOf(row: ReceiptTable, sequencer: string): SignedReceipt {
  return { v: 1, ...transferView(row), sequencer, signature: row.signature };
}

export interface WithdrawalView {
  id: string;
  did: string;
  amount: string;
  payout_address: string;
  swap_out: string | null;
  status: WithdrawalTable['status'];
  seq: number;
  /** The batch that burned it, once its payout names it; the payout transaction and its block once sent. */
  batch_number: number | null;
  tx_hash: string | null;
  block_number: number | null;
  attempts: number;
  last_error: string | null;
  created_at: string;
}

export function withdrawalView(row: WithdrawalTable): WithdrawalView {
  return {
    id: row.id,
    did: row.did,
    amount: formatAmount(row.amount),
    payout_address: row.payout_address,
    swap_out: row.swap_out,
    status: row.status,
    seq: Number(row.seq),
    batch_number: row.batch_number === null ? null : Number(row.batch_number),
    tx_hash: row.tx_hash,
    block_number: row.block_number === null ? null : Number(row.block_number),
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
  };
}

export interface DepositView {
  id: string;
  source: DepositTable['source'];
  did: string;
  amount: string;
  tx_hash: string;
  log_index: number;
  /** The vault's deposit index and the block it landed in (chain deposits only). */
  chain_index: number | null;
  block_number: number | null;
  seq: number;
  created_at: string;
}

export function depositView(row: DepositTable): DepositView {
  return {
    id: row.id,
    source: row.source,
    did: row.did,
    amount: formatAmount(row.amount),
    tx_hash: row.tx_hash,
    log_index: row.log_index,
    chain_index: row.chain_index === null ? null : Number(row.chain_index),
    block_number: row.block_number === null ? null : Number(row.block_number),
    seq: Number(row.seq),
    created_at: row.created_at.toISOString(),
  };
}

/** The columns of a batch without its balance-tree dump (large; read only for proofs). */
export const batchSummaryColumns = [
  'id',
  'number',
  'first_seq',
  'last_seq',
  'opened_at',
  'closed_at',
  'reason',
  'log_size',
  'log_root',
  'balance_root',
  'account_count',
  'checkpoint',
  'anchor_status',
  'anchor_tx_hash',
  'anchor_block',
  'anchor_gas_used',
  'withdrawals_root',
  'deposits_covered',
] as const;

/** A batch row without its two tree dumps (large; proofs are served by their own routes). */
export type BatchSummary = Omit<BatchTable, 'balance_tree' | 'withdrawal_tree' | 'event_id'>;

/** A batch without its balance-tree dump (large; proofs are served by their own route). */
export interface BatchView {
  id: string;
  number: number;
  first_seq: number;
  last_seq: number;
  opened_at: string;
  closed_at: string;
  reason: string;
  log_size: number;
  log_root: string;
  balance_root: string;
  account_count: number;
  checkpoint: string;
  /** Root of the withdrawals burned in this window; null when there were none. */
  withdrawals_root: string | null;
  /** Vault deposits with an index below this are in the balance tree (or waiting unclaimed); later ones are not. */
  deposits_covered: number;
  anchor: AnchorView;
}

export interface AnchorView {
  chain_id: number;
  /** The vault, which stores the anchors. */
  contract: string | null;
  status: BatchTable['anchor_status'];
  tx_hash: string | null;
  block_number: number | null;
  gas_used: number | null;
}

export function batchView(row: BatchSummary, chain: { chainId: number; vaultAddress: string | null }): BatchView {
  return {
    id: row.id,
    number: Number(row.number),
    first_seq: Number(row.first_seq),
    last_seq: Number(row.last_seq),
    opened_at: row.opened_at.toISOString(),
    closed_at: row.closed_at.toISOString(),
    reason: row.reason,
    log_size: Number(row.log_size),
    log_root: row.log_root,
    balance_root: row.balance_root,
    account_count: row.account_count,
    checkpoint: row.checkpoint,
    withdrawals_root: row.withdrawals_root,
    deposits_covered: Number(row.deposits_covered),
    anchor: {
      chain_id: chain.chainId,
      contract: chain.vaultAddress,
      status: row.anchor_status,
      tx_hash: row.anchor_tx_hash,
      block_number: row.anchor_block === null ? null : Number(row.anchor_block),
      gas_used: row.anchor_gas_used === null ? null : Number(row.anchor_gas_used),
    },
  };
}
