import { bytesToHex, hexToBytes } from '../web-crypto.ts';
import { openCheckpoint } from './checkpoint-verify.ts';
import { verifyConsistency, verifyInclusion } from './merkle-proofs.ts';
import { isValidKeyName, verifierKeyOf } from './note-verify.ts';
import type { Receipt } from './receipt-shape.ts';
import { receiptLeafHashOf, verifyReceipt } from './receipt-verify.ts';

/**
 * Everything a third party needs to check one settlement receipt offline, as settlement serves it:
 * the signed receipt, the signed checkpoint of the batch that covers it with the inclusion proof, and
 * optionally a later checkpoint with the consistency proof from the batch's checkpoint to it.
 */
export interface ReceiptEvidence {
  /** The seq asked for: the receipt must carry it, and its leaf index is seq - 1. */
  seq: number;
  /** The signed receipt (`GET /v1/receipt/{seq}` → `receipt`), unchecked. */
  receipt: unknown;
  /** The covering batch's checkpoint note, or null while no batch covers the receipt yet. */
  checkpoint: string | null;
  /** Hex hashes from the leaf's sibling up; null while no batch covers the receipt. */
  inclusionProof: readonly string[] | null;
  /** The latest checkpoint and the consistency proof (hex) from the covering checkpoint's size to its size. */
  latest?: { checkpoint: string; consistencyProof: readonly string[] } | undefined;
}

/** The keys the verifier trusts: the sequencer's ed25519 key (64 hex) signs receipts and, under the origin, checkpoints. */
export interface ReceiptLogKeys {
  sequencerPublicKey: string;
  /** The checkpoint origin (`/v1/info` → `checkpoint_origin`): the note key's name. */
  origin: string;
}

export type EvidenceVerdict = { ok: true; receipt: Receipt; treeSize: number; rootHex: string; latestSize: number | undefined } | { ok: false; reason: string };

const hexHash = /^(0x)?[0-9a-fA-F]{64}$/;

function hashesFromHex(proof: readonly string[]): Uint8Array[] | undefined {
  if (!Array.isArray(proof) || !proof.every((hash) => typeof hash === 'string' && hexHash.test(hash))) return undefined;
  return proof.map((hash) => hexToBytes(hash.replace(/^0x/, '')) as Uint8Array);
}

/**
 * Checks a receipt end to end with nothing but the trusted keys: the receipt's shape, seq and ed25519 signature;
 * the covering checkpoint's signature and origin; the inclusion proof of leaf `seq - 1` against the checkpoint's
 * root; and, when given, that the latest checkpoint extends it (so the log was not rewritten since). The checkpoint
 * verifier key is derived from the sequencer key and the origin (settlement signs both with one key), so pinning
 * the one key pins everything. Every failure is a returned one-line reason. It runs on WebCrypto, so the CLI and the
 * console in a browser run this same code.
 *
 * @example const verdict = await verifyReceiptEvidence(evidence, { sequencerPublicKey: info.sequencer_public_key, origin: info.checkpoint_origin })
 */
export async function verifyReceiptEvidence(evidence: ReceiptEvidence, keys: ReceiptLogKeys): Promise<EvidenceVerdict> {
  const signed = await verifyReceipt(evidence.receipt, keys.sequencerPublicKey);
  if (!signed.ok) return { ok: false, reason: `receipt: ${signed.reason}` };
  const receipt = signed.receipt;
  if (receipt.seq !== evidence.seq) return { ok: false, reason: `receipt: seq is ${receipt.seq}, not the ${evidence.seq} asked for` };
  if (evidence.checkpoint === null || evidence.inclusionProof === null)
    return { ok: false, reason: 'no checkpoint covers the receipt yet (its window has not closed into a batch)' };
  if (!isValidKeyName(keys.origin)) return { ok: false, reason: 'the checkpoint origin is not a valid note key name' };
  const vkey = await verifierKeyOf(keys.origin, hexToBytes(receipt.sequencer) as Uint8Array);
  const checkpoint = await openCheckpoint(evidence.checkpoint, vkey);
  if (!checkpoint.ok) return { ok: false, reason: `checkpoint: ${checkpoint.reason}` };
  if (checkpoint.origin !== keys.origin) return { ok: false, reason: `checkpoint: origin "${checkpoint.origin}" is not "${keys.origin}"` };
  const proof = hashesFromHex(evidence.inclusionProof);
  if (!proof) return { ok: false, reason: 'inclusion proof: not a list of 32-byte hex hashes' };
  if (!(await verifyInclusion(await receiptLeafHashOf(receipt), receipt.seq - 1, checkpoint.treeSize, proof, checkpoint.rootHash)))
    return { ok: false, reason: `inclusion proof: leaf ${receipt.seq - 1} does not lead to the root of the checkpoint of size ${checkpoint.treeSize}` };
  const rootHex = `0x${bytesToHex(checkpoint.rootHash)}`;
  if (!evidence.latest) return { ok: true, receipt, treeSize: checkpoint.treeSize, rootHex, latestSize: undefined };
  const latest = await openCheckpoint(evidence.latest.checkpoint, vkey);
  if (!latest.ok) return { ok: false, reason: `latest checkpoint: ${latest.reason}` };
  const consistency = hashesFromHex(evidence.latest.consistencyProof);
  if (!consistency) return { ok: false, reason: 'consistency proof: not a list of 32-byte hex hashes' };
  if (!(await verifyConsistency(checkpoint.treeSize, latest.treeSize, checkpoint.rootHash, latest.rootHash, consistency)))
    return {
      ok: false,
      reason: `consistency proof: the latest checkpoint (size ${latest.treeSize}) does not extend the receipt's (size ${checkpoint.treeSize})`,
    };
  return { ok: true, receipt, treeSize: checkpoint.treeSize, rootHex, latestSize: latest.treeSize };
}
