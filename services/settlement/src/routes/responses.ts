import { FailureSchema, okSchema } from '@platform/kit/envelope';
import { receiptKinds } from '@platform/kit/receipt-log/receipt';
import { amount, did, evmAddress, hex32, isoTime, nullable, untyped, uuid } from '@platform/kit/wire-schemas';
import { type TSchema, Type } from 'typebox';

/**
 * The response schemas of settlement's routes, written from what they answer (`ledger/views.ts`, the sequencer's
 * command results, `reads/ledger-reads.ts`). They also serialise: a member left out here is not sent.
 */

const seq = (description?: string) => Type.Integer({ minimum: 1, ...(description ? { description } : {}) });
const hex = (description: string) => Type.String({ pattern: '^[0-9a-f]+$', description });
const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

export const AccountView = Type.Object({
  did: did(),
  balance: amount('Spendable now'),
  held: amount('Locked in open holds this account pays'),
  escrow_bound: amount('Open holds this account pays that can still be captured'),
  payout_address: nullable(evmAddress('Where withdrawals are paid, once bound')),
  created_at: nullable(isoTime('Its first credit; null before it')),
});

export const HoldView = Type.Object({
  id: uuid(),
  payer: did(),
  payee: did(),
  amount: amount(),
  captured: amount(),
  returned: amount(),
  status: literals(['open', 'captured', 'released', 'expired']),
  ref: Type.String(),
  expires_at: isoTime(),
  created_at: isoTime(),
  closed_at: nullable(isoTime()),
  created_seq: seq(),
  closed_seq: nullable(seq()),
});

export const WithdrawalView = Type.Object({
  id: uuid(),
  did: did(),
  amount: amount(),
  payout_address: evmAddress(),
  swap_out: nullable(Type.String()),
  status: literals(['pending', 'broadcast', 'confirmed', 'failed']),
  seq: seq('The withdraw receipt'),
  batch_number: nullable(Type.Integer({ description: 'The batch that burned it, once its payout names it' })),
  tx_hash: nullable(hex32('The payout transaction, once sent')),
  block_number: nullable(Type.Integer()),
  attempts: Type.Integer(),
  last_error: nullable(Type.String()),
  created_at: isoTime(),
});

export const DepositView = Type.Object({
  id: uuid(),
  source: literals(['chain', 'faucet']),
  did: did(),
  amount: amount(),
  tx_hash: Type.String({ description: 'The chain transaction (0x + 64 hex), or faucet:<uuid> for a recorded faucet credit' }),
  log_index: Type.Integer(),
  chain_index: nullable(Type.Integer({ description: 'The vault’s deposit index (chain deposits only)' })),
  block_number: nullable(Type.Integer()),
  seq: seq(),
  created_at: isoTime(),
});

export const AnchorView = Type.Object({
  chain_id: Type.Integer(),
  contract: nullable(evmAddress('The vault, which stores the anchors')),
  status: literals(['recorded', 'broadcast', 'confirmed']),
  tx_hash: nullable(hex32()),
  block_number: nullable(Type.Integer()),
  gas_used: nullable(Type.Integer()),
});

export const BatchView = Type.Object({
  id: uuid(),
  number: Type.Integer({ minimum: 1 }),
  first_seq: Type.Integer(),
  last_seq: Type.Integer(),
  opened_at: isoTime(),
  closed_at: isoTime(),
  reason: Type.String({ description: 'What closed the window: time, size, amount, settle' }),
  log_size: Type.Integer(),
  log_root: hex32('RFC 9162 root of the receipt log at log_size'),
  balance_root: hex32('Root of the balance tree'),
  account_count: Type.Integer(),
  checkpoint: Type.String({ description: 'The signed C2SP checkpoint note' }),
  withdrawals_root: nullable(hex32('Root of the withdrawals burned in this window; null when none were')),
  deposits_covered: Type.Integer({ description: 'Vault deposits with an index below this are in the balance tree' }),
  anchor: AnchorView,
});

export const TransferView = Type.Object({
  seq: seq(),
  kind: literals(receiptKinds),
  from: nullable(did('Null for a deposit')),
  to: nullable(did('Null for a withdraw')),
  amount: amount(),
  ref: Type.String(),
  hold_id: nullable(uuid()),
  at: isoTime(),
});

export const SignedReceipt = Type.Object({
  v: Type.Literal(1),
  ...TransferView.properties,
  sequencer: hex('The sequencer’s ed25519 public key'),
  signature: hex('ed25519 over the receipt bytes'),
});

/** Settlement's view of the chain in `/v1/info` and `/healthz`: its members depend on the mode (`recording` or `live`). */
export const ChainInfo = Type.Object(
  { mode: literals(['recording', 'live']) },
  { additionalProperties: true, description: 'live adds token_address, sequencer_address, confirmations, deposit_call' },
);
export const ChainHealth = Type.Object(
  { mode: Type.Literal('live'), chain_id: Type.Integer(), vault: nullable(evmAddress()), frozen: Type.Boolean(), alarm: Type.Optional(Type.String()) },
  { description: 'With a live chain only' },
);

export const SupplyView = Type.Object(
  {
    supply: amount('Every balance and hold'),
    available: amount(),
    held: amount(),
    reserve: amount('What backs the supply'),
    fully_reserved: Type.Boolean(),
    chain_id: Type.Integer(),
    vault_address: nullable(evmAddress()),
  },
  {
    additionalProperties: true,
    description: 'A live chain adds vault_tokens (the token’s balanceOf the vault), in_flight_withdrawals, uncredited_deposits, last_check and alarm',
  },
);

/** What the sequencer answers for each movement (its results are typed `unknown`, hence `untyped`). */
export const MovementResults = {
  pay: untyped(Type.Object({ seq: seq(), receipt: SignedReceipt })),
  hold: untyped(Type.Object({ hold: HoldView, seq: seq() })),
  capture: untyped(Type.Object({ hold: HoldView, seqs: Type.Array(seq(), { description: 'The capture receipt, then the release of the rest when any' }) })),
  release: untyped(Type.Object({ hold: HoldView, seq: seq() })),
  withdraw: untyped(Type.Object({ withdrawal: WithdrawalView, seq: seq() })),
  deposit: Type.Object({ deposit: DepositView, replayed: Type.Boolean({ description: 'The same chain event was credited before' }) }),
};

/** One item's answer in a batch: what the single route would have answered, its HTTP status beside a failure. */
const itemFailure = Type.Object(
  {
    ok: Type.Literal(false),
    status: Type.Integer({ description: 'The HTTP status the single route would have answered' }),
    error: untyped(FailureSchema.properties.error),
  },
  { description: 'This item failed; the others stand on their own' },
);
const batchOf = (item: TSchema, description: string) => Type.Object({ results: Type.Array(Type.Union([okSchema(item), itemFailure]), { description }) });

/** The batch routes' answers: one result per item, in the items' order. */
export const BatchResults = {
  holds: batchOf(MovementResults.hold, 'One per item, in order: as POST /v1/hold answers it'),
  settle: batchOf(Type.Union([MovementResults.capture, MovementResults.release]), 'One per item, in order: as the capture or release route answers it'),
};
