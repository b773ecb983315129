import { decodeCanonicalBase64, type NoteRefusal, openNote, type VerifierKey } from './note-verify.ts';

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
  rootHash: Uint8Array;
}

export type CheckpointRefusal = NoteRefusal | 'malformed checkpoint' | 'extension lines are not accepted' | 'malformed tree size' | 'malformed root hash';

export type CheckpointOpening = ({ ok: true } & Checkpoint) | { ok: false; reason: CheckpointRefusal };

const decimal = /^(?:0|[1-9][0-9]*)$/;

/**
 * Verifies a signed checkpoint against the log's verifier key, then parses its body strictly: exactly
 * three lines, a non-empty origin, a decimal size without leading zeroes that fits a safe integer,
 * and a canonical base64 root of 32 bytes. Every refusal is a returned reason, never an exception.
 *
 * @example
 * const opened = await openCheckpoint(noteText, info.verifierKey);
 * if (opened.ok && opened.origin === expectedOrigin) await verifyInclusion(leaf, seq, opened.treeSize, proof, opened.rootHash);
 */
export async function openCheckpoint(note: string, vkey: string | VerifierKey): Promise<CheckpointOpening> {
  const opened = await openNote(note, vkey);
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
