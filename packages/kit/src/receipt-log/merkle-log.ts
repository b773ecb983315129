import { hash } from 'node:crypto';

export { verifyConsistency, verifyInclusion } from './merkle-proofs.ts';

/**
 * The receipt log's Merkle tree, exactly as RFC 9162 section 2.1 defines it: SHA-256, leaves hashed
 * as HASH(0x00 || data), interior nodes as HASH(0x01 || left || right), and every tree split at the
 * largest power of two smaller than its size. The 0x00/0x01 prefixes keep a leaf from ever being
 * passed off as an interior node (second-preimage resistance).
 *
 * Generation works over an in-memory array of leaf hashes and costs O(n) per call. A persistent
 * version would store the hash of every complete, aligned subtree (level l, index i covering leaves
 * [i·2^l, (i+1)·2^l)) as each one fills, which is what C2SP tlog-tiles does: MTH of any range the
 * split rule produces is then one of those stored hashes or a right edge of O(log n) of them, so each
 * proof costs O(log n) reads and stored hashes never change once written.
 *
 * Verification (merkle-proofs.ts, on WebCrypto so browsers run it too) is the iterative algorithm of RFC 9162
 * 2.1.3.2 and 2.1.4.2, the one a third party writes without ever seeing the tree.
 */

/** MTH({}) = SHA-256 of the empty string: the root of the empty tree (RFC 9162 2.1.1). */
const emptyRoot: Buffer = hash('sha256', '', 'buffer');

/**
 * The hash of one leaf: SHA-256(0x00 || data).
 *
 * @example leafHash(Buffer.from('')).toString('hex') // '6e340b9c…afa01d'
 */
export function leafHash(data: Uint8Array): Buffer {
  return prefixedHash(0x00, data);
}

/**
 * The hash of an interior node: SHA-256(0x01 || left || right).
 *
 * @example nodeHash(leafHash(a), leafHash(b)) // root of the two-leaf tree [a, b]
 */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return prefixedHash(0x01, left, right);
}

/**
 * SHA-256 of a prefix byte and the parts, in one-shot hash(): a createHash() chain made a native Hash object per
 * call, whose weak handle the collector then had to visit (a ledger hashes a leaf per receipt).
 */
function prefixedHash(prefix: number, ...parts: Uint8Array[]): Buffer {
  let length = 1;
  for (const part of parts) length += part.length;
  const input = Buffer.allocUnsafe(length);
  input[0] = prefix;
  let offset = 1;
  for (const part of parts) {
    input.set(part, offset);
    offset += part.length;
  }
  return hash('sha256', input, 'buffer');
}

/** The largest power of two strictly smaller than n, for n > 1: the split point k of RFC 9162 2.1.1. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[lo:hi]) for hi > lo. Recursion depth is log2 of the range, so large logs are safe. */
function subtreeHash(leaves: readonly Buffer[], lo: number, hi: number): Buffer {
  if (hi - lo === 1) return leaves[lo] as Buffer;
  const k = splitPoint(hi - lo);
  return nodeHash(subtreeHash(leaves, lo, lo + k), subtreeHash(leaves, lo + k, hi));
}

function checkSize(leafHashes: readonly Buffer[], treeSize: number): void {
  // A bad size here is a bug in the caller (routes validate against the latest checkpoint first), not an expected failure.
  if (!Number.isSafeInteger(treeSize) || treeSize < 0 || treeSize > leafHashes.length) {
    throw new RangeError(`tree size ${treeSize} is outside 0..${leafHashes.length}`);
  }
}

/**
 * The Merkle Tree Hash of the first `treeSize` leaf hashes (all of them by default).
 *
 * @example rootHash([]).toString('hex') // 'e3b0c442…b855', SHA-256 of nothing
 * @example rootHash(receipts.map(leafHash))
 */
export function rootHash(leafHashes: readonly Buffer[], treeSize: number = leafHashes.length): Buffer {
  checkSize(leafHashes, treeSize);
  return treeSize === 0 ? Buffer.from(emptyRoot) : subtreeHash(leafHashes, 0, treeSize);
}

/**
 * The inclusion proof PATH(m, D[n]) of RFC 9162 2.1.3.1 for leaf `index` in the tree of the first
 * `treeSize` leaves, ordered from the leaf's sibling up to the root's child. Throws a RangeError when
 * index >= treeSize, which the caller rules out before asking.
 *
 * @example inclusionProof(leaves, 5) // proof that leaf 5 is in the tree of all the leaves
 * @example inclusionProof(leaves, seq, checkpoint.treeSize) // against an older checkpoint
 */
export function inclusionProof(leafHashes: readonly Buffer[], index: number, treeSize: number = leafHashes.length): Buffer[] {
  checkSize(leafHashes, treeSize);
  return inclusionPath((lo, hi) => subtreeHash(leafHashes, lo, hi), index, treeSize);
}

/** MTH(D[lo:hi]) of a tree however it is stored (the leaves here, settlement's cached levels there). */
export type SubtreeHasher = (lo: number, hi: number) => Buffer;

/**
 * PATH(index, D[treeSize]) of RFC 9162 2.1.3.1 over any store of the tree's subtree hashes; `treeSize` is the
 * caller's to check against its store. Throws a RangeError when index >= treeSize.
 */
export function inclusionPath(hashOf: SubtreeHasher, index: number, treeSize: number): Buffer[] {
  if (!Number.isSafeInteger(index) || index < 0 || index >= treeSize) throw new RangeError(`leaf index ${index} is outside 0..${treeSize - 1}`);
  const proof: Buffer[] = [];
  let lo = 0;
  let hi = treeSize;
  let m = index;
  // Walk down from the root; each level contributes the other half's hash, then the list is reversed to run leaf → root.
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (m < k) {
      proof.push(hashOf(lo + k, hi));
      hi = lo + k;
    } else {
      proof.push(hashOf(lo, lo + k));
      lo += k;
      m -= k;
    }
  }
  return proof.reverse();
}

/**
 * The consistency proof PROOF(m, D[n]) of RFC 9162 2.1.4.1 between the trees of the first `oldSize`
 * and `newSize` leaves. Empty when oldSize is 0 or equal to newSize, where there is nothing to prove.
 * Throws a RangeError unless 0 <= oldSize <= newSize <= leafHashes.length.
 *
 * @example consistencyProof(leaves, previous.treeSize, latest.treeSize)
 */
export function consistencyProof(leafHashes: readonly Buffer[], oldSize: number, newSize: number): Buffer[] {
  checkSize(leafHashes, newSize);
  return consistencyPath((lo, hi) => subtreeHash(leafHashes, lo, hi), oldSize, newSize);
}

/**
 * PROOF(oldSize, D[newSize]) of RFC 9162 2.1.4.1 over any store of the tree's subtree hashes; `newSize` is the
 * caller's to check against its store. Empty when oldSize is 0 or newSize. Throws a RangeError unless oldSize <= newSize.
 */
export function consistencyPath(hashOf: SubtreeHasher, oldSize: number, newSize: number): Buffer[] {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0 || oldSize > newSize) throw new RangeError(`old size ${oldSize} is outside 0..${newSize}`);
  if (oldSize === 0 || oldSize === newSize) return [];
  const proof: Buffer[] = [];
  let lo = 0;
  let hi = newSize;
  let m = oldSize;
  // `complete` is SUBPROOF's flag b: true while the old tree is still a prefix whose root the verifier already has.
  let complete = true;
  while (m !== hi - lo) {
    const k = splitPoint(hi - lo);
    if (m <= k) {
      proof.push(hashOf(lo + k, hi));
      hi = lo + k;
    } else {
      proof.push(hashOf(lo, lo + k));
      lo += k;
      m -= k;
      complete = false;
    }
  }
  if (!complete) proof.push(hashOf(lo, hi));
  return proof.reverse();
}
