import { hasControlCharacter, type NoteSigner, signNote } from './signed-note.ts';

export { type Checkpoint, type CheckpointOpening, type CheckpointRefusal, openCheckpoint } from './checkpoint-verify.ts';
export { verifierKey } from './signed-note.ts';

/** Signing checkpoints (settlement, at each window close); opening them is in checkpoint-verify.ts, on WebCrypto. */

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
