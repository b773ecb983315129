import type { NonceSchema } from '@platform/kit/auth/nonce-store';
import type { ReceiptKind } from '@platform/kit/receipt-log/receipt';

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
  /** The vault's deposit index (chain deposits only). */
  chain_index: bigint | null;
  block_number: bigint | null;
}

/** A vault deposit whose DID hash no claim names yet: not credited until that DID asks for its deposit instructions. */
export interface UnclaimedDepositTable {
  chain_index: bigint;
  account_hash: string;
  from_address: string;
  amount: bigint;
  tx_hash: string;
  log_index: number;
  block_number: bigint;
  seen_at: Date;
  /** Set once credited to the DID that claimed it. */
  credited_seq: bigint | null;
}

/** keccak256(DID) → DID, recorded when the DID asks where to deposit: the vault's events name accounts by hash only. */
export interface DepositClaimTable {
  account_hash: string;
  did: string;
  created_at: Date;
}

/** pending → broadcast → confirmed; failed (and retried) when its payout reverted. */
export type WithdrawalStatus = 'pending' | 'broadcast' | 'confirmed' | 'failed';

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
  /** The batch whose withdrawal tree holds it (set when the vault pays it). */
  batch_number: bigint | null;
  block_number: bigint | null;
  attempts: number;
  last_error: string | null;
  /** When its payout last moved (the retry delay counts from here); null while pending. */
  updated_at: Date | null;
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
  anchor_status: AnchorStatus;
  anchor_tx_hash: string | null;
  anchor_block: bigint | null;
  /** Root of the withdrawals burned in this window (null when none), and the tree to prove each one. */
  withdrawals_root: string | null;
  withdrawal_tree: unknown;
  /** Vault deposits with an index below this are in the balance tree (or unclaimed); later ones are not. */
  deposits_covered: bigint;
  anchor_gas_used: bigint | null;
  /** The id of its anchor event: where the batch entered the stream, after the receipts committed before it (see event-log.ts). */
  event_id: bigint;
}

/** One row: the last receipt seq whose transfer event keeps the first scheme's id (2·seq); see event-log.ts. */
export interface EventIdsTable {
  legacy_seq: bigint;
}

/** `recorded` until a transaction carries it, `broadcast` while it is mined and confirmed, `confirmed` on chain. */
export type AnchorStatus = 'recorded' | 'broadcast' | 'confirmed';

export type ChainTransactionStatus = 'sent' | 'mined' | 'confirmed' | 'failed';

/** Every transaction the sequencer's EVM key signs, stored before it is broadcast. */
export interface ChainTransactionTable {
  id: string;
  /** What it does: anchor, payout, heartbeat, faucet, … */
  purpose: string;
  /** What it is for: the batch number, the withdrawal id, … */
  ref: string;
  nonce: bigint;
  /** Every hash sent for this nonce, oldest first (a fee bump replaces the transaction under a new hash). */
  hashes: string[];
  /** The latest signed transaction, to broadcast again after a restart. */
  raw: string;
  max_fee_per_gas: string;
  max_priority_fee_per_gas: string;
  status: ChainTransactionStatus;
  /** The one of `hashes` that was mined. */
  mined_hash: string | null;
  block_number: bigint | null;
  gas_used: bigint | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ChainStateTable {
  name: string;
  value: unknown;
  updated_at: Date;
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
  unclaimed_deposits: UnclaimedDepositTable;
  deposit_claims: DepositClaimTable;
  chain_transactions: ChainTransactionTable;
  chain_state: ChainStateTable;
  event_ids: EventIdsTable;
}
