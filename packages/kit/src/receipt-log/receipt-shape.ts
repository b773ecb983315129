import { parseDid } from '../auth/did.ts';
import { canonicalJson } from '../canonical-text.ts';
import { formatAmount, parseAmount } from '../money.ts';
import { maxIntentRefLength, refPattern } from '../settlement-ref.ts';

/**
 * The receipt: the sequencer's signed record of one accepted balance movement, numbered by the global
 * `seq`. A third party rebuilds the signed bytes from the receipt alone:
 *
 *     receiptBytes = UTF-8("platform-settlement-receipt-v1\n" || RFC 8785 canonical JSON of the ten fields)
 *
 * The same bytes are the receipt log's leaf data, so the log leaf hash is SHA-256(0x00 || receiptBytes)
 * (RFC 9162) and receipt `seq` is leaf index `seq - 1` (seq starts at 1, leaf indexes at 0). Nothing in
 * a receipt depends on the batch or anchor it later lands in: a receipt never changes after issue.
 *
 * Direction by kind (`from` and `to` are agent DIDs, `hold_id` a hold's UUID):
 *
 * | kind     | from  | to    | hold_id | funds move                                      |
 * |----------|-------|-------|---------|-------------------------------------------------|
 * | deposit  | null  | DID   | null    | vault reserve in → `to` (minted)                |
 * | transfer | DID   | DID   | null    | `from` → `to`                                   |
 * | hold     | payer | payee | id      | payer's available balance → escrow              |
 * | capture  | payer | payee | id      | escrow → payee                                  |
 * | release  | payer | payee | id      | escrow → payer (released before expiry)         |
 * | expire   | payer | payee | id      | escrow → payer (automatically, at expiry)       |
 * | withdraw | DID   | null  | null    | `from` → out (burned, reserve released)         |
 *
 * The four hold kinds always name the hold's two parties, so filtering by DID finds every movement of a
 * hold; the kind says where the funds went. `from` and `to` never name the same DID: such a movement
 * changes no balance and would only pad the log.
 */

export const receiptKinds = ['deposit', 'transfer', 'hold', 'capture', 'release', 'expire', 'withdraw'] as const;
export type ReceiptKind = (typeof receiptKinds)[number];

/** Prefixed to the canonical JSON so a receipt signature can never pass as the sequencer's signature over anything else. */
export const receiptSigningDomain = 'platform-settlement-receipt-v1\n';

export interface Receipt {
  /** Format version; only 1 exists. */
  v: 1;
  /** The global sequence number, 1, 2, 3, …; a JSON number, so at most 2^53 - 1 to stay exact in every parser. */
  seq: number;
  kind: ReceiptKind;
  /** The DID funds come from; null for a deposit. */
  from: string | null;
  /** The DID funds go to; null for a withdraw. */
  to: string | null;
  /** Decimal string of the settlement unit with exactly 6 places (formatAmount), above zero. */
  amount: string;
  /** The caller's reference (the intent's ref; for a deposit, the chain event): printable ASCII, 0–200 characters. */
  ref: string;
  /** The hold's id (lowercase UUID) for hold, capture, release and expire; null otherwise. */
  hold_id: string | null;
  /** When the sequencer accepted the movement: ISO 8601 UTC with milliseconds, as Date#toISOString writes it. */
  at: string;
  /** The sequencer's raw ed25519 public key, 64 lowercase hex: names the key that signs, so rotation shows. */
  sequencer: string;
}

/** A receipt with the sequencer's ed25519 signature over receiptBytes, 128 lowercase hex. */
export interface SignedReceipt extends Receipt {
  signature: string;
}

export type ReceiptCheck = { ok: true; receipt: Receipt } | { ok: false; reason: string };
export type SignedReceiptCheck = { ok: true; signed: SignedReceipt } | { ok: false; reason: string };

const receiptKeys = ['v', 'seq', 'kind', 'from', 'to', 'amount', 'ref', 'hold_id', 'at', 'sequencer'] as const;
const signedKeys = [...receiptKeys, 'signature'] as const;
const fromNull: readonly ReceiptKind[] = ['deposit'];
const toNull: readonly ReceiptKind[] = ['withdraw'];
const holdKinds: readonly ReceiptKind[] = ['hold', 'capture', 'release', 'expire'];
const lowerUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const isoMillis = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const lowerHex64 = /^[0-9a-f]{64}$/;
const lowerHex128 = /^[0-9a-f]{128}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function keyProblem(value: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) if (!Object.hasOwn(value, key)) return `receipt is missing ${key}`;
  for (const key of Object.keys(value)) if (!keys.includes(key)) return `receipt has unknown field ${key}`;
  return undefined;
}

/** A DID or null as the kind demands. Ill-formed UTF-16 is refused: RFC 8785 (via I-JSON) has no bytes for a lone surrogate. */
function partyProblem(value: unknown, field: 'from' | 'to', mustBeNull: boolean): string | undefined {
  if (mustBeNull) return value === null ? undefined : `receipt.${field} must be null for this kind`;
  if (typeof value !== 'string' || !value.isWellFormed() || !parseDid(value)) return `receipt.${field} must be a well-formed DID`;
  return undefined;
}

function fieldProblem(r: Record<string, unknown>): string | undefined {
  if (r.v !== 1) return 'receipt.v must be the number 1';
  if (typeof r.seq !== 'number' || !Number.isSafeInteger(r.seq) || r.seq < 1) return 'receipt.seq must be an integer from 1 to 2^53 - 1';
  if (!(receiptKinds as readonly unknown[]).includes(r.kind)) return `receipt.kind must be one of ${receiptKinds.join(', ')}`;
  const kind = r.kind as ReceiptKind;
  const party = partyProblem(r.from, 'from', fromNull.includes(kind)) ?? partyProblem(r.to, 'to', toNull.includes(kind));
  if (party) return party;
  if (r.from !== null && r.from === r.to) return 'receipt.from and receipt.to must differ';
  const amount = parseAmount(r.amount);
  if (!amount.ok) return `receipt.amount: ${amount.reason}`;
  // One spelling per amount: '1.5' and '1.500000' would sign different bytes for the same movement.
  if (formatAmount(amount.micros) !== r.amount) return 'receipt.amount must have exactly 6 decimal places';
  if (typeof r.ref !== 'string' || r.ref.length > maxIntentRefLength || !refPattern.test(r.ref)) {
    return `receipt.ref must be printable ASCII of at most ${maxIntentRefLength} characters`;
  }
  if (holdKinds.includes(kind)) {
    if (typeof r.hold_id !== 'string' || !lowerUuid.test(r.hold_id)) return 'receipt.hold_id must be a lowercase UUID for this kind';
  } else if (r.hold_id !== null) return 'receipt.hold_id must be null for this kind';
  // Round-tripping through Date refuses 02-30 and 24:00, which the pattern alone lets through.
  if (typeof r.at !== 'string' || !isoMillis.test(r.at) || Number.isNaN(Date.parse(r.at)) || new Date(r.at).toISOString() !== r.at) {
    return 'receipt.at must be ISO 8601 UTC with milliseconds, such as 2026-01-01T00:00:00.000Z';
  }
  if (typeof r.sequencer !== 'string' || !lowerHex64.test(r.sequencer)) return 'receipt.sequencer must be 64 lowercase hex characters';
  return undefined;
}

/**
 * Checks that a value is exactly a valid receipt: the ten fields and no others, their types and
 * formats, and the per-kind rules for from, to and hold_id. Returns the receipt or the first problem.
 *
 * @example checkReceipt(JSON.parse(body)) // { ok: false, reason: 'receipt.to must be null for this kind' }
 */
export function checkReceipt(value: unknown): ReceiptCheck {
  if (!isRecord(value)) return { ok: false, reason: 'receipt must be a JSON object' };
  const problem = keyProblem(value, receiptKeys) ?? fieldProblem(value);
  return problem ? { ok: false, reason: problem } : { ok: true, receipt: value as unknown as Receipt };
}

/**
 * Like checkReceipt, for a receipt carrying its `signature` (128 lowercase hex). It does not verify the
 * signature; verifyReceipt does.
 *
 * @example const checked = checkSignedReceipt(await response.json())
 */
export function checkSignedReceipt(value: unknown): SignedReceiptCheck {
  if (!isRecord(value)) return { ok: false, reason: 'receipt must be a JSON object' };
  const problem = keyProblem(value, signedKeys) ?? fieldProblem(value);
  if (problem) return { ok: false, reason: problem };
  if (typeof value.signature !== 'string' || !lowerHex128.test(value.signature))
    return { ok: false, reason: 'receipt.signature must be 128 lowercase hex characters' };
  return { ok: true, signed: value as unknown as SignedReceipt };
}

/**
 * The exact text whose UTF-8 bytes are signed and form the receipt log's leaf: the domain line, then the RFC 8785
 * canonical JSON of the ten receipt fields. Only those fields are taken, so `signature` or a stray property never
 * joins the text. It does not validate; signReceipt and verifyReceipt do.
 *
 * @example receiptText(receipt) // 'platform-settlement-receipt-v1\n{"amount":"12.500000","at":…}'
 */
export function receiptText(receipt: Receipt): string {
  const { v, seq, kind, from, to, amount, ref, hold_id, at, sequencer } = receipt;
  return receiptSigningDomain + canonicalJson({ v, seq, kind, from, to, amount, ref, hold_id, at, sequencer });
}
