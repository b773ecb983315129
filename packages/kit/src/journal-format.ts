import { canonicalJson } from './canonical-text.ts';

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

/** The text whose SHA-256 is an envelope's hash: the RFC 8785 JSON of the whole envelope, signature included. */
export function hashedText(envelope: JournalEnvelope): string {
  const { intent_id, seq, kind, at, prev, body, signature } = envelope;
  return canonicalJson({ intent_id, seq, kind, at, prev, body, signature });
}
