import type { NonceSchema } from '@platform/kit/auth/nonce-store';
import type { ReceiptKind } from '../receipts/receipt.ts';

/** One row per agent DID, created on its first credit. Amounts are micros (10^-6 of the settlement unit). */
export interface AccountTable {
  did: string;
  /** Available to spend. */
  balance: bigint;
  /** Locked in this account's open holds (as payer). */
  held: bigint;
  payout_address: string | null;
  created_at: Date;
}

export interface ReceiptTable {
  seq: bigint;
  kind: ReceiptKind;
  from_did: string | null;
  to_did: string | null;
  amount: bigint;
  ref: string;
  hold_id: string | null;
  at: Date;
  /** ed25519 over the receipt bytes, 128 hex. */
  signature: string;
  /** RFC 9162 leaf hash of the receipt bytes: the log is rebuilt from these at start. */
  leaf_hash: Buffer;
}

export type HoldStatus = 'open' | 'captured' | 'released' | 'expired';

export interface HoldTable {
  id: string;
  payer: string;
  payee: string;
  amount: bigint;
  captured: bigint;
  /** Returned to the payer: the rest after a capture, or all of it on release or expiry. */
  returned: bigint;
  status: HoldStatus;
  ref: string;
  expires_at: Date;
  created_at: Date;
  closed_at: Date | null;
  created_seq: bigint;
  closed_seq: bigint | null;
}

export interface IdempotencyTable {
  did: string;
  key: string;
  operation: string;
  request_hash: string;
  result: unknown;
  created_at: Date;
}

export interface IntentNonceTable {
  did: string;
  nonce: string;
  expires_at: Date;
}

export interface DepositTable {
  id: string;
  /** `chain` for the watcher's credits, `faucet` for the development faucet. */
  source: 'chain' | 'faucet';
  tx_hash: string;
  log_index: number;
  did: string;
  amount: bigint;
  seq: bigint;
  created_at: Date;
}

export type WithdrawalStatus = 'pending' | 'broadcast' | 'confirmed';

export interface WithdrawalTable {
  id: string;
  did: string;
  amount: bigint;
  payout_address: string;
  swap_out: string | null;
  status: WithdrawalStatus;
  seq: bigint;
  tx_hash: string | null;
  created_at: Date;
}

export interface BatchTable {
  id: string;
  number: bigint;
  /** Window bounds: the receipts first_seq..last_seq were issued in this window. */
  first_seq: bigint;
  last_seq: bigint;
  opened_at: Date;
  closed_at: Date;
  reason: string;
  log_size: bigint;
  log_root: string;
  balance_root: string;
  account_count: number;
  checkpoint: string;
  balance_tree: unknown;
  anchor_status: 'recorded' | 'broadcast' | 'confirmed';
  anchor_tx_hash: string | null;
  anchor_block: bigint | null;
}

/** What the chain adapter would send; the chain issue's broadcaster drains it. */
export interface ChainOutboxTable {
  id: string;
  kind: 'anchor' | 'payout';
  payload: unknown;
  status: 'recorded' | 'broadcast' | 'confirmed';
  created_at: Date;
}

export interface SettlementSchema extends NonceSchema {
  accounts: AccountTable;
  receipts: ReceiptTable;
  holds: HoldTable;
  idempotency: IdempotencyTable;
  intent_nonces: IntentNonceTable;
  deposits: DepositTable;
  withdrawals: WithdrawalTable;
  batches: BatchTable;
  chain_outbox: ChainOutboxTable;
}
