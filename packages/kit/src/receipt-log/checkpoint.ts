import { decodeCanonicalBase64, hasControlCharacter, type NoteRefusal, type NoteSigner, openNote, signNote } from './signed-note.ts';

export { verifierKey } from './signed-note.ts';

/**
 * Checkpoints of the receipt log in the C2SP tlog-checkpoint format (https://c2sp.org/tlog-checkpoint):
 * a signed note whose text is exactly
 *
 *     <origin>\n<tree size in decimal>\n<base64 root hash>\n
 *
 * signed by the sequencer's ed25519 key at each window close.
 *
 * Extension lines (optional further body lines, which the spec allows but does NOT RECOMMEND because
 * monitors cannot audit them) are refused when opening: our sequencer never writes them, so a signed
 * checkpoint carrying them did not come from this code, and accepting opaque signed text would let
 * it ride along unchecked. Supporting them later means returning the extra lines instead of refusing.
 *
 * The origin returned by openCheckpoint is whatever the note says; callers must compare it with the
 * origin they expect (the sequencer's key name, by our convention) before trusting the tree head.
 */

export interface Checkpoint {
  origin: string;
  treeSize: number;
  rootHash: Buffer;
}

export type CheckpointRefusal = NoteRefusal | 'malformed checkpoint' | 'extension lines are not accepted' | 'malformed tree size' | 'malformed root hash';

export type CheckpointOpening = ({ ok: true } & Checkpoint) | { ok: false; reason: CheckpointRefusal };

const decimal = /^(?:0|[1-9][0-9]*)$/;

/**
 * Signs a checkpoint and returns the signed note. Throws on an empty origin or one holding control
 * characters, a size that is not a non-negative safe integer, or a root that is not 32 bytes: the
 * sequencer computes all three, so any of them is a bug.
 *
 * @example
 * signCheckpoint({ origin: 'settlement.example/receipts', treeSize: 42, rootHash: rootHash(leaves) },
 *   { name: 'settlement.example/receipts', privateKey: privateKeyFromSeed(seedHex) });
 */
export function signCheckpoint(checkpoint: { origin: string; treeSize: number; rootHash: Uint8Array }, signer: NoteSigner): string {
  const { origin, treeSize, rootHash } = checkpoint;
  if (origin === '' || origin.includes('\n') || hasControlCharacter(origin)) throw new Error('checkpoint origin must be non-empty and on one line');
  if (!Number.isSafeInteger(treeSize) || treeSize < 0) throw new Error(`checkpoint tree size must be a non-negative safe integer, got ${treeSize}`);
  if (rootHash.length !== 32) throw new Error('checkpoint root hash must be 32 bytes');
  return signNote(`${origin}\n${treeSize}\n${Buffer.from(rootHash).toString('base64')}\n`, signer);
}

/**
 * Verifies a signed checkpoint against the log's verifier key, then parses its body strictly: exactly
 * three lines, a non-empty origin, a decimal size without leading zeroes that fits a safe integer,
 * and a canonical base64 root of 32 bytes. Every refusal is a returned reason, never an exception.
 *
 * @example
 * const opened = openCheckpoint(noteText, info.verifierKey);
 * if (opened.ok && opened.origin === expectedOrigin) verifyInclusion(leaf, seq, opened.treeSize, proof, opened.rootHash);
 */
export function openCheckpoint(note: string, vkey: string): CheckpointOpening {
  const opened = openNote(note, vkey);
  if (!opened.ok) return opened;
  // The signature is checked first, so nothing unauthenticated is ever interpreted.
  const lines = opened.text.slice(0, -1).split('\n');
  if (lines.length < 3 || lines.some((line) => line === '')) return { ok: false, reason: 'malformed checkpoint' };
  if (lines.length > 3) return { ok: false, reason: 'extension lines are not accepted' };
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!decimal.test(sizeText) || sizeText.length > 16 || !Number.isSafeInteger(Number(sizeText))) return { ok: false, reason: 'malformed tree size' };
  const rootHash = decodeCanonicalBase64(rootText);
  if (rootHash?.length !== 32) return { ok: false, reason: 'malformed root hash' };
  return { ok: true, origin, treeSize: Number(sizeText), rootHash };
}
