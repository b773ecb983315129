import { envelopeKindPattern, hashedText, type JournalEnvelope, signedText } from './journal-format.ts';
import { bytesToHex, hexToBytes, sha256, utf8, verifyEd25519 } from './web-crypto.ts';

/** An envelope's hash (hex SHA-256 of hashedText), on WebCrypto. */
export async function envelopeHashOf(envelope: JournalEnvelope): Promise<string> {
  return bytesToHex(await sha256(utf8(hashedText(envelope))));
}

export type ChainVerdict =
  | { ok: true; intentId: string; count: number; lastKind: string }
  | { ok: false; intentId: string | undefined; seq: number; reason: string };

/**
 * Checks a whole chain against the agent's public key: positions from 1 without gaps, each `prev` the hash of the
 * envelope before, each `intent_id` the hash of the first (and `expectedId`, the folder name, when given), kinds
 * well formed, and every signature. Stops at the first bad envelope and names it. On WebCrypto, so the CLI, the
 * daemon and the console in a browser run this same check.
 *
 * @example const verdict = await verifyChain(envelopes, identity.public_key, folderName)
 */
export async function verifyChain(envelopes: readonly JournalEnvelope[], publicKeyHex: string, expectedId?: string): Promise<ChainVerdict> {
  const publicKey = hexToBytes(publicKeyHex);
  if (publicKey?.length !== 32) return { ok: false, intentId: expectedId, seq: 1, reason: 'the public key is not 32 bytes of hex' };
  const first = envelopes[0];
  if (first === undefined) return { ok: false, intentId: expectedId, seq: 1, reason: 'the journal has no envelopes' };
  const intentId = await envelopeHashOf(first);
  let previousHash: string | null = null;
  for (const [index, envelope] of envelopes.entries()) {
    const seq = index + 1;
    const problem = await envelopeProblem(envelope, seq, previousHash, seq === 1 ? null : intentId, publicKey);
    if (problem !== undefined) return { ok: false, intentId: seq === 1 ? expectedId : intentId, seq, reason: problem };
    if (seq === 1 && expectedId !== undefined && expectedId !== intentId)
      return { ok: false, intentId: expectedId, seq: 1, reason: `the first envelope hashes to ${intentId}, not to the intent id ${expectedId}` };
    previousHash = await envelopeHashOf(envelope);
  }
  return { ok: true, intentId, count: envelopes.length, lastKind: envelopes.at(-1)?.kind ?? '' };
}

async function envelopeProblem(
  envelope: JournalEnvelope,
  seq: number,
  prev: string | null,
  intentId: string | null,
  publicKey: Uint8Array,
): Promise<string | undefined> {
  if (typeof envelope !== 'object' || envelope === null) return 'not an envelope object';
  if (envelope.seq !== seq) return `seq is ${String(envelope.seq)} where ${seq} was expected (reordered or missing envelope)`;
  if (typeof envelope.kind !== 'string' || !envelopeKindPattern.test(envelope.kind)) return 'kind is malformed';
  if (typeof envelope.at !== 'string' || Number.isNaN(Date.parse(envelope.at))) return 'at is not a time';
  if (typeof envelope.body !== 'object' || envelope.body === null || Array.isArray(envelope.body)) return 'body is not an object';
  if (envelope.prev !== prev)
    return prev === null ? 'the first envelope must have prev null' : 'prev is not the hash of the envelope before (cut, reordered or edited)';
  if (envelope.intent_id !== intentId)
    return intentId === null ? 'the first envelope must have intent_id null' : 'intent_id is not the hash of the first envelope';
  const signature = typeof envelope.signature === 'string' && envelope.signature.length === 128 ? hexToBytes(envelope.signature) : undefined;
  if (signature === undefined || !(await verifyEd25519(publicKey, utf8(signedText(envelope)), signature))) return 'signature does not verify';
  return undefined;
}
