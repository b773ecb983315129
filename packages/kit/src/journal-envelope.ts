import { createHash, type KeyObject } from 'node:crypto';
import { signMessage, verifyMessage } from './auth/ed25519.ts';
import { canonicalJson } from './canonical-json.ts';

/**
 * The daemon's signed journal: every lifecycle change of an intent is one envelope, signed with the agent's ed25519
 * key and chained to the one before it by hash, so a journal cannot be reordered, cut in the middle or edited
 * without the verifier naming the first envelope that fails.
 *
 * Signed bytes: the UTF-8 of `platform-daemon-journal-v1\n` followed by the RFC 8785 JSON of
 * `{intent_id, seq, kind, at, prev, body}` (every member present; `intent_id` and `prev` are null on the first
 * envelope). The signature is the 64-byte ed25519 signature of those bytes, as 128 lowercase hex.
 * An envelope's hash is the SHA-256 (hex) of the RFC 8785 JSON of the whole envelope, signature included; `prev`
 * is the hash of the envelope before, and the intent id is the hash of the first envelope.
 */
export const journalDomain = 'platform-daemon-journal-v1\n';

export interface JournalEnvelope {
  /** The intent this envelope belongs to; null on the first envelope, whose hash is the intent id. */
  intent_id: string | null;
  /** Position in the chain, from 1. */
  seq: number;
  kind: string;
  /** ISO 8601 UTC time the daemon recorded it. */
  at: string;
  /** Hash of the previous envelope; null on the first. */
  prev: string | null;
  body: Record<string, unknown>;
  signature: string;
}

export type UnsignedEnvelope = Omit<JournalEnvelope, 'signature'>;

/** Envelope kinds are lowercase words joined by dots (`intent.created`, `gate.invoked`); they name journal files. */
export const envelopeKindPattern = /^[a-z]+(\.[a-z]+)*$/;

/** The exact text whose UTF-8 bytes are signed. */
export function signedText(envelope: UnsignedEnvelope): string {
  const { intent_id, seq, kind, at, prev, body } = envelope;
  return journalDomain + canonicalJson({ intent_id, seq, kind, at, prev, body });
}

/** SHA-256 hex of the whole envelope's RFC 8785 JSON: the next envelope's `prev`, and for the first, the intent id. */
export function envelopeHash(envelope: JournalEnvelope): string {
  const { intent_id, seq, kind, at, prev, body, signature } = envelope;
  return createHash('sha256').update(canonicalJson({ intent_id, seq, kind, at, prev, body, signature }), 'utf8').digest('hex');
}

/**
 * Signs an envelope.
 *
 * @example const first = signEnvelope(key, { intent_id: null, seq: 1, kind: 'intent.created', at, prev: null, body })
 */
export function signEnvelope(privateKey: KeyObject, envelope: UnsignedEnvelope): JournalEnvelope {
  return { ...envelope, signature: signMessage(privateKey, signedText(envelope)) };
}

export type ChainVerdict =
  | { ok: true; intentId: string; count: number; lastKind: string }
  | { ok: false; intentId: string | undefined; seq: number; reason: string };

/**
 * Checks a whole chain against the agent's public key: positions from 1 without gaps, each `prev` the hash of the
 * envelope before, each `intent_id` the hash of the first (and `expectedId`, the folder name, when given), kinds
 * well formed, and every signature. Stops at the first bad envelope and names it.
 *
 * @example const verdict = verifyChain(envelopes, publicKeyFromHex(hex)!, folderName)
 */
export function verifyChain(envelopes: readonly JournalEnvelope[], publicKey: KeyObject, expectedId?: string): ChainVerdict {
  const first = envelopes[0];
  if (first === undefined) return { ok: false, intentId: expectedId, seq: 1, reason: 'the journal has no envelopes' };
  const intentId = envelopeHash(first);
  let previousHash: string | null = null;
  for (const [index, envelope] of envelopes.entries()) {
    const seq = index + 1;
    const problem = envelopeProblem(envelope, seq, previousHash, seq === 1 ? null : intentId, publicKey);
    if (problem !== undefined) return { ok: false, intentId: seq === 1 ? expectedId : intentId, seq, reason: problem };
    if (seq === 1 && expectedId !== undefined && expectedId !== intentId)
      return { ok: false, intentId: expectedId, seq: 1, reason: `the first envelope hashes to ${intentId}, not to the intent id ${expectedId}` };
    previousHash = envelopeHash(envelope);
  }
  return { ok: true, intentId, count: envelopes.length, lastKind: envelopes.at(-1)?.kind ?? '' };
}

function envelopeProblem(envelope: JournalEnvelope, seq: number, prev: string | null, intentId: string | null, publicKey: KeyObject): string | undefined {
  if (typeof envelope !== 'object' || envelope === null) return 'not an envelope object';
  if (envelope.seq !== seq) return `seq is ${String(envelope.seq)} where ${seq} was expected (reordered or missing envelope)`;
  if (typeof envelope.kind !== 'string' || !envelopeKindPattern.test(envelope.kind)) return 'kind is malformed';
  if (typeof envelope.at !== 'string' || Number.isNaN(Date.parse(envelope.at))) return 'at is not a time';
  if (typeof envelope.body !== 'object' || envelope.body === null || Array.isArray(envelope.body)) return 'body is not an object';
  if (envelope.prev !== prev)
    return prev === null ? 'the first envelope must have prev null' : 'prev is not the hash of the envelope before (cut, reordered or edited)';
  if (envelope.intent_id !== intentId)
    return intentId === null ? 'the first envelope must have intent_id null' : 'intent_id is not the hash of the first envelope';
  if (typeof envelope.signature !== 'string' || !verifyMessage(publicKey, signedText(envelope), envelope.signature)) return 'signature does not verify';
  return undefined;
}
