import { KeyObject, randomBytes } from 'node:crypto';
import { type ParsedDid, parseDid } from './auth/did.ts';
import { publicKeyFromHex, publicKeyHex, signMessage, verifyMessage } from './auth/ed25519.ts';
import { canonicalJson } from './canonical-json.ts';
import { parseAmount } from './money.ts';
import { maxIntentRefLength, refPattern } from './settlement-ref.ts';

/**
 * The settlement intent: a payer's ed25519-signed authorisation to move one amount once. The settlement
 * service accepts it as an in-band principal and the marketplace carries it in `X-Ledger-Payment`, so both
 * sides check the same bytes.
 */

/** The operations an intent can authorise. Closed: a new one needs a new version of this module. */
export const intentPurposes = ['pay', 'hold', 'withdraw', 'invoke'] as const;
export type IntentPurpose = (typeof intentPurposes)[number];

/**
 * Prefixed to the canonical JSON before signing, so a signature over an intent can never be replayed as
 * a signature over anything else the same key signs (a handshake challenge, a future v2 intent).
 */
export const intentSigningDomain = 'platform-settlement-intent-v1\n';

/** Longest accepted wire form, in characters. A real intent is under 1 KiB; this bounds header size and work. */
export const maxIntentWireLength = 4096;

/** Default for how far ahead an expiry may be, so a leaked intent cannot be replayed for days. */
export const defaultMaxIntentLifetimeSeconds = 3600;

export { maxIntentRefLength } from './settlement-ref.ts';

export interface SettlementIntent {
  /** Format version; only 1 exists. */
  version: 1;
  /** The payer's DID (`did:platform:<label>:<16 hex>`); its fingerprint must match the signing key. */
  from: string;
  /** The payee's DID. For `withdraw` it is the payer's own DID: the funds go to the account's payout address. */
  to: string;
  /** Decimal string of the settlement unit, at most 6 places, above zero (see money.ts). */
  amount: string;
  /** The caller's reference (e.g. `0x` + 64 hex binding digest): printable ASCII, 0–200 characters, '' for none. */
  ref: string;
  /** 16–64 base64url characters, unique per payer; the service consumes it once (see IntentNonceStore). */
  nonce: string;
  /** ISO 8601 UTC (`YYYY-MM-DDTHH:MM:SS[.sss]Z`); the intent is refused at and after this instant. */
  expiry: string;
  /** pay: transfer to `to`; hold: escrow for `to`; withdraw: burn and release reserve; invoke: pay a marketplace call. */
  purpose: IntentPurpose;
}

/** An intent with the payer's raw public key (64 hex) and ed25519 signature (128 hex). */
export interface SignedIntent {
  intent: SettlementIntent;
  public_key: string;
  signature: string;
}

export type IntentDecode = { ok: true; signed: SignedIntent } | { ok: false; reason: string };

export type IntentVerification =
  | { ok: true; intent: SettlementIntent; payer: ParsedDid; payee: ParsedDid; micros: bigint; expiresAt: Date }
  | { ok: false; reason: string };

export interface VerifyIntentOptions {
  now: Date;
  expectedPurpose?: IntentPurpose;
  /** Defaults to `defaultMaxIntentLifetimeSeconds`. */
  maxLifetimeSeconds?: number;
}

/**
 * Replay protection, implemented by each service over its own storage. `consume` resolves true exactly
 * once per (payer, nonce); the service keeps nonces until their expiry, after which verifyIntent refuses
 * the intent anyway. Call it only after verifyIntent succeeds, so a forged intent cannot burn a nonce.
 */
export interface IntentNonceStore {
  consume(payerDid: string, nonce: string, expiry: Date): Promise<boolean>;
}

const intentKeys = ['version', 'from', 'to', 'amount', 'ref', 'nonce', 'expiry', 'purpose'] as const;
const signedKeys = ['intent', 'public_key', 'signature'] as const;
const base64url = /^[A-Za-z0-9_-]+$/;
const noncePattern = /^[A-Za-z0-9_-]{16,64}$/;
const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;
const lowerHex64 = /^[0-9a-f]{64}$/;
const lowerHex128 = /^[0-9a-f]{128}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The exact text the payer signs: the domain line, then the RFC 8785 canonical JSON of the eight fields.
 * Only the named fields are taken, so a stray property can never change or join the signed bytes.
 *
 * @example intentSigningText(intent) // 'platform-settlement-intent-v1\n{"amount":"1.500000",...}'
 */
export function intentSigningText(intent: SettlementIntent): string {
  const { version, from, to, amount, ref, nonce, expiry, purpose } = intent;
  return intentSigningDomain + canonicalJson({ version, from, to, amount, ref, nonce, expiry, purpose });
}

/**
 * A fresh nonce: 24 random bytes as 32 base64url characters.
 *
 * @example const intent = { ...terms, nonce: newIntentNonce() }
 */
export function newIntentNonce(): string {
  return randomBytes(24).toString('base64url');
}

/** A payer's key that signs without handing out its private key (an agent key): its public key and a signer. */
export interface IntentSigner {
  publicKeyHex: string;
  sign(message: string): string;
}

/**
 * Signs an intent with the payer's key: a private key object, or a signer that already knows its public key (no
 * key object made or exported per intent). It does not validate the intent: verifyIntent is the one gate.
 *
 * @example const wire = encodeIntent(signIntent(intent, privateKeyFromSeed(seedHex)))
 */
export function signIntent(intent: SettlementIntent, key: KeyObject | IntentSigner): SignedIntent {
  if (key instanceof KeyObject) return { intent, public_key: publicKeyHex(key), signature: signMessage(key, intentSigningText(intent)) };
  return { intent, public_key: key.publicKeyHex, signature: key.sign(intentSigningText(intent)) };
}

/**
 * The wire form: base64url, unpadded, of the canonical JSON of `{intent, public_key, signature}`.
 *
 * @example headers['x-ledger-payment'] = encodeIntent(signed)
 */
export function encodeIntent(signed: SignedIntent): string {
  const { intent, public_key, signature } = signed;
  const { version, from, to, amount, ref, nonce, expiry, purpose } = intent;
  const body = { intent: { version, from, to, amount, ref, nonce, expiry, purpose }, public_key, signature };
  return Buffer.from(canonicalJson(body), 'utf8').toString('base64url');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first missing or unknown member of an object with a fixed set of keys. */
function keyProblem(value: Record<string, unknown>, keys: readonly string[], where: string): string | undefined {
  for (const key of keys) if (!Object.hasOwn(value, key)) return `${where} is missing ${key}`;
  for (const key of Object.keys(value)) if (!keys.includes(key)) return `${where} has unknown field ${key}`;
  return undefined;
}

function shapeProblem(body: unknown): string | undefined {
  if (!isRecord(body)) return 'payment intent must be a JSON object';
  const outer = keyProblem(body, signedKeys, 'payment intent');
  if (outer) return outer;
  if (typeof body.public_key !== 'string' || !lowerHex64.test(body.public_key)) return 'public_key must be 64 lowercase hex characters';
  if (typeof body.signature !== 'string' || !lowerHex128.test(body.signature)) return 'signature must be 128 lowercase hex characters';
  const intent = body.intent;
  if (!isRecord(intent)) return 'intent must be an object';
  const inner = keyProblem(intent, intentKeys, 'intent');
  if (inner) return inner;
  if (intent.version !== 1) return 'intent.version must be the number 1';
  for (const key of intentKeys) {
    if (key !== 'version' && typeof intent[key] !== 'string') return `intent.${key} must be a string`;
  }
  if (!(intentPurposes as readonly unknown[]).includes(intent.purpose)) return `intent.purpose must be one of ${intentPurposes.join(', ')}`;
  return undefined;
}

/**
 * Decodes the wire form and checks its shape: exact fields, types, version and purpose. It does not
 * verify the signature, the amount or the expiry; call verifyIntent on the result.
 *
 * @example const decoded = decodeIntent(request.headers['x-ledger-payment'])
 */
export function decodeIntent(wire: string): IntentDecode {
  if (typeof wire !== 'string' || wire === '') return { ok: false, reason: 'payment intent is empty' };
  if (wire.length > maxIntentWireLength) return { ok: false, reason: `payment intent is longer than ${maxIntentWireLength} characters` };
  const notBase64url = { ok: false, reason: 'payment intent is not canonical unpadded base64url' } as const;
  if (!base64url.test(wire)) return notBase64url;
  const bytes = Buffer.from(wire, 'base64url');
  // Canonical encoding only: Node's decoder ignores stray low bits, so one intent could otherwise have several spellings.
  if (bytes.toString('base64url') !== wire) return notBase64url;
  let text: string;
  let body: unknown;
  try {
    text = utf8.decode(bytes);
    body = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'payment intent is not UTF-8 JSON' };
  }
  const problem = shapeProblem(body);
  if (problem) return { ok: false, reason: problem };
  // One spelling on the wire too; it also refuses duplicate keys, which different JSON parsers resolve differently.
  // A string holding a lone surrogate (an escape JSON allows) has no canonical form at all: RFC 8785 refuses it.
  let canonical: string | undefined;
  try {
    canonical = canonicalJson(body);
  } catch {
    canonical = undefined;
  }
  if (canonical !== text) return { ok: false, reason: 'payment intent JSON is not in RFC 8785 canonical form' };
  return { ok: true, signed: body as unknown as SignedIntent };
}

/** The instant of a strict ISO 8601 UTC string, or undefined; Date rolls 02-30 into March, so fields must round-trip. */
function parseExpiry(text: string): Date | undefined {
  if (!isoUtc.test(text)) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 19) !== text.slice(0, 19)) return undefined;
  return date;
}

/**
 * Verifies a signed intent: version, DIDs, amount, ref, nonce and expiry format, purpose, public key
 * and its DID fingerprint, signature over the exact signed bytes, then expiry window (now == expiry is
 * expired). Replay is not checked here: consume the nonce with an IntentNonceStore after success.
 *
 * @example const checked = verifyIntent(decoded.signed, { now: clock.now(), expectedPurpose: 'pay' })
 */
export function verifyIntent(signed: SignedIntent, options: VerifyIntentOptions): IntentVerification {
  return checkIntent(signed, options, true);
}

/**
 * Every check of verifyIntent but the signature's, for a service that only hands the intent on to settlement,
 * which verifies it before anything moves (the marketplace, before it asks for a hold: an ed25519 verification
 * was a fifth of its CPU per paid call, and settlement refuses a forged intent anyway). What it answers is the
 * intent as its signer claims it: never act on it beyond refusing early.
 */
export function inspectIntent(signed: SignedIntent, options: VerifyIntentOptions): IntentVerification {
  return checkIntent(signed, options, false);
}

function checkIntent(signed: SignedIntent, options: VerifyIntentOptions, checkSignature: boolean): IntentVerification {
  const { intent } = signed;
  if (intent.version !== 1) return { ok: false, reason: 'intent.version must be the number 1' };
  const payer = parseDid(intent.from);
  if (!payer) return { ok: false, reason: 'intent.from is not a well-formed DID' };
  const payee = parseDid(intent.to);
  if (!payee) return { ok: false, reason: 'intent.to is not a well-formed DID' };
  const amount = parseAmount(intent.amount);
  if (!amount.ok) return { ok: false, reason: `intent.amount: ${amount.reason}` };
  if (typeof intent.ref !== 'string' || intent.ref.length > maxIntentRefLength || !refPattern.test(intent.ref)) {
    return { ok: false, reason: `intent.ref must be printable ASCII of at most ${maxIntentRefLength} characters` };
  }
  if (typeof intent.nonce !== 'string' || !noncePattern.test(intent.nonce)) return { ok: false, reason: 'intent.nonce must be 16 to 64 base64url characters' };
  const expiresAt = typeof intent.expiry === 'string' ? parseExpiry(intent.expiry) : undefined;
  if (!expiresAt) return { ok: false, reason: 'intent.expiry must be an ISO 8601 UTC time such as 2026-01-01T00:00:00Z' };
  if (!intentPurposes.includes(intent.purpose)) return { ok: false, reason: `intent.purpose must be one of ${intentPurposes.join(', ')}` };
  if (options.expectedPurpose !== undefined && intent.purpose !== options.expectedPurpose) {
    return { ok: false, reason: `intent.purpose is ${intent.purpose}, expected ${options.expectedPurpose}` };
  }
  if (intent.purpose === 'withdraw' && intent.to !== intent.from) return { ok: false, reason: 'a withdraw intent must name the payer as to' };
  const publicKey = publicKeyFromHex(signed.public_key);
  if (!publicKey) return { ok: false, reason: 'public_key is not a 32-byte ed25519 key in hex' };
  if (signed.public_key.slice(0, 16).toLowerCase() !== payer.keyFingerprint.toLowerCase()) {
    return { ok: false, reason: 'public_key does not match the key fingerprint of intent.from' };
  }
  if (checkSignature && !verifyMessage(publicKey, intentSigningText(intent), signed.signature))
    return { ok: false, reason: 'signature does not verify over the intent' };
  const remainingMs = expiresAt.getTime() - options.now.getTime();
  if (remainingMs <= 0) return { ok: false, reason: 'intent has expired' };
  const maxLifetimeSeconds = options.maxLifetimeSeconds ?? defaultMaxIntentLifetimeSeconds;
  if (remainingMs > maxLifetimeSeconds * 1000) return { ok: false, reason: `intent.expiry is more than ${maxLifetimeSeconds} s ahead` };
  const { version, from, to, ref, nonce, expiry, purpose } = intent;
  return { ok: true, intent: { version, from, to, amount: intent.amount, ref, nonce, expiry, purpose }, payer, payee, micros: amount.micros, expiresAt };
}
