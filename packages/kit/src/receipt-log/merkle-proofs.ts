import { concat, equalBytes, sha256 } from '../web-crypto.ts';

/**
 * Checking the receipt log's RFC 9162 proofs, on WebCrypto so a browser runs the same code as the CLI (the tree and
 * its proofs are built by merkle-log.ts, on node:crypto). Sizes and indexes are JavaScript numbers and must be safe
 * integers; the loops use arithmetic, not 32-bit bitwise operators, so they stay right past 2^31.
 */

const hashLength = 32;

/** MTH({}) = SHA-256 of the empty string: the root of the empty tree (RFC 9162 2.1.1). */
const emptyRoot = sha256();

/** An RFC 9162 leaf hash, SHA-256(0x00 || data). */
export function leafHashOf(data: Uint8Array): Promise<Uint8Array> {
  return sha256(Uint8Array.of(0x00), data);
}

/** An RFC 9162 interior node, SHA-256(0x01 || left || right). */
function nodeHash(left: Uint8Array, right: Uint8Array): Promise<Uint8Array> {
  return sha256(concat(Uint8Array.of(0x01), left, right));
}

function isHash(value: Uint8Array): boolean {
  return value instanceof Uint8Array && value.length === hashLength;
}

function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return isHash(a) && isHash(b) && equalBytes(a, b);
}

function isSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

const half = (n: number): number => Math.floor(n / 2);
const lsb = (n: number): boolean => n % 2 === 1;

function isPowerOfTwo(n: number): boolean {
  let v = n;
  while (v > 1 && v % 2 === 0) v /= 2;
  return v === 1;
}

/**
 * Checks an inclusion proof with the algorithm of RFC 9162 2.1.3.2: false unless index < treeSize,
 * every hash is 32 bytes, the proof has exactly the length the tree shape demands, and it leads from
 * `leaf` (a leaf hash) to `root`.
 *
 * @example await verifyInclusion(leafHash(receiptBytes), seq, checkpoint.treeSize, proof, checkpoint.rootHash)
 */
export async function verifyInclusion(leaf: Uint8Array, index: number, treeSize: number, proof: readonly Uint8Array[], root: Uint8Array): Promise<boolean> {
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return false;
  if (!isHash(leaf) || !isHash(root) || !proof.every(isHash)) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r: Uint8Array = leaf;
  for (const p of proof) {
    // A proof longer than the path from leaf to root runs out of tree.
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = await nodeHash(p, r);
      // Skip the levels where this node is the last, unpaired one and is carried up unchanged.
      while (!lsb(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // sn reaching exactly 0 rejects a proof that stops short of the root.
  return sn === 0 && sameHash(r, root);
}

/**
 * Checks a consistency proof with the algorithm of RFC 9162 2.1.4.2, plus the cases it leaves to the
 * caller: oldSize must not exceed newSize; equal sizes need an empty proof and equal roots; oldSize 0
 * needs an empty proof and `oldRoot` equal to the empty tree's hash (any tree extends the empty one,
 * so `newRoot` is only checked when newSize is 0 as well). When oldSize is a power of two the old
 * root is itself a node of the new tree and the proof omits it; the algorithm puts it back in front.
 *
 * @example await verifyConsistency(seen.treeSize, latest.treeSize, seen.rootHash, latest.rootHash, proof)
 */
export async function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): Promise<boolean> {
  if (!isSize(oldSize) || !isSize(newSize) || oldSize > newSize) return false;
  if (!isHash(oldRoot) || !isHash(newRoot) || !proof.every(isHash)) return false;
  if (oldSize === 0) return proof.length === 0 && sameHash(oldRoot, await emptyRoot) && (newSize > 0 || sameHash(newRoot, await emptyRoot));
  if (oldSize === newSize) return proof.length === 0 && sameHash(oldRoot, newRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (lsb(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (!lsb(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && sameHash(fr, oldRoot) && sameHash(sr, newRoot);
}
