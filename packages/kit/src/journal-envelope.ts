import { hash, type KeyObject } from 'node:crypto';
import { signMessage } from './auth/ed25519.ts';
import { hashedText, type JournalEnvelope, signedText, type UnsignedEnvelope } from './journal-format.ts';

/** Signing and hashing journal envelopes as the daemon writes them (node:crypto); the format is journal-format.ts, the verifier journal-verify.ts. */

export * from './journal-format.ts';
export { type ChainVerdict, verifyChain } from './journal-verify.ts';

/** SHA-256 hex of the whole envelope's RFC 8785 JSON: the next envelope's `prev`, and for the first, the intent id. */
export function envelopeHash(envelope: JournalEnvelope): string {
  return hash('sha256', hashedText(envelope), 'hex');
}

/**
 * Signs an envelope.
 *
 * @example const first = signEnvelope(key, { intent_id: null, seq: 1, kind: 'intent.created', at, prev: null, body })
 */
export function signEnvelope(privateKey: KeyObject, envelope: UnsignedEnvelope): JournalEnvelope {
  return { ...envelope, signature: signMessage(privateKey, signedText(envelope)) };
}
