import { consistencyPath, inclusionPath, nodeHash, rootHash, splitPoint } from '@platform/kit/receipt-log/merkle-log';

/**
 * An in-memory, append-only cache of the receipt log's Merkle tree that answers root, inclusion and
 * consistency queries with O(log n) hashing, byte for byte the same answers as merkle-log.ts's
 * rootHash, inclusionProof and consistencyProof (which rehash from the leaves, O(n) per call).
 *
 * Why: every receipt read comes with an inclusion proof and every checkpoint with a consistency
 * proof. Over a log of millions of leaves the O(n) functions rehash the whole log on each request
 * (about 2.5 s per million leaves on a 2-core machine), so reads would get slower as the ledger
 * grows. Here a query depends only on log2 of the tree size: tens of microseconds at a million.
 *
 * How: the "stored hash" idea of C2SP tlog-tiles, kept in memory. Level 0 holds the leaf hashes in
 * order; level k >= 1 holds, for every i, the hash of the COMPLETE aligned subtree of leaves
 * [i·2^k, (i+1)·2^k), written once, the moment its last leaf is appended (appending leaf index n hashes one
 * parent per trailing 1-bit of n: one node hash per leaf on average), and never changed after. Every
 * subtree the RFC 9162 split rule produces is either one of those stored hashes (an O(1) lookup) or a
 * right edge whose MTH needs fewer than log2(n) node hashes; a proof walk meets at most one such
 * right edge, the rest of its path runs through complete aligned subtrees. So root(n) costs
 * popcount(n) - 1 node hashes, and an inclusion or consistency proof fewer than log2(n) + 1.
 *
 * Memory: about 2n hashes in all (n leaves, n/2 + n/4 + … < n interior nodes), 64 bytes per leaf,
 * because each level is packed into flat 128 KiB chunks: one Buffer object per 32-byte hash would cost
 * several hundred bytes each on the heap. A million-leaf log therefore takes about 64 MB. The cache is
 * not persistent: rebuild it with appendMany from the stored leaves on start-up (fewer than n node hashes).
 *
 * Hashes come in and go out as copies, so a caller who mutates a Buffer cannot corrupt the cache.
 * Sizes and indexes are safe integers; argument errors throw a RangeError, as in merkle-log.ts.
 */

const hashLength = 32;

/** Hashes per full chunk of a level: 2^12 × 32 bytes = 128 KiB. The first chunk grows to it by doubling. */
const chunkHashes = 4096;

/** An append-only list of 32-byte hashes packed into chunks; `get` returns a view, never a copy. */
class HashStore {
  readonly #chunks: Buffer[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(hash: Uint8Array): void {
    const chunkIndex = Math.floor(this.#length / chunkHashes);
    const offset = (this.#length % chunkHashes) * hashLength;
    let chunk = this.#chunks[chunkIndex];
    if (chunk === undefined || chunk.length < offset + hashLength) {
      // Small levels (and small logs) stay small: only the first chunk grows, the others are allocated whole.
      const capacity = chunkIndex === 0 ? Math.min(chunkHashes, Math.max(8, 2 * (offset / hashLength))) : chunkHashes;
      const grown = Buffer.alloc(capacity * hashLength);
      chunk?.copy(grown);
      this.#chunks[chunkIndex] = grown;
      chunk = grown;
    }
    chunk.set(hash, offset);
    this.#length += 1;
  }

  get(index: number): Buffer {
    const chunk = this.#chunks[Math.floor(index / chunkHashes)] as Buffer;
    const offset = (index % chunkHashes) * hashLength;
    return chunk.subarray(offset, offset + hashLength);
  }
}

/** k when n = 2^k, otherwise -1. */
function exactLog2(n: number): number {
  let level = 0;
  for (let width = 1; width < n; width *= 2) level += 1;
  return 2 ** level === n ? level : -1;
}

function checkHash(hash: Uint8Array, position: number): void {
  if (!(hash instanceof Uint8Array)) throw new TypeError(`leaf hash ${position} is not a Buffer`);
  if (hash.length !== hashLength) throw new RangeError(`leaf hash ${position} is ${hash.length} bytes, not ${hashLength}`);
}

/**
 * The receipt log's Merkle tree, cached level by level as leaves are appended.
 *
 * @example
 * const cache = new ReceiptLogCache();
 * cache.appendMany(receipts.map(leafHash));
 * const proof = cache.inclusionProof(seq, checkpoint.treeSize);
 * verifyInclusion(leafHash(receiptBytes), seq, checkpoint.treeSize, proof, checkpoint.rootHash); // true
 */
export class ReceiptLogCache {
  /** #levels[k] holds the hash of every complete aligned subtree of 2^k leaves, in order; #levels[0] is the leaves. */
  readonly #levels: HashStore[];
  readonly #leaves: HashStore;

  constructor() {
    this.#leaves = new HashStore();
    this.#levels = [this.#leaves];
  }

  /** The number of leaves appended so far. */
  get size(): number {
    return this.#leaves.length;
  }

  /**
   * Appends one leaf hash (32 bytes, e.g. leafHash(receiptBytes)) and the hashes of the subtrees it
   * completes. Throws a TypeError for a non-Buffer and a RangeError for a wrong length.
   */
  append(hash: Buffer): void {
    checkHash(hash, this.size);
    this.#append(hash);
  }

  /** Appends the leaf hashes in order, as repeated append would; checks them all first, so a bad one appends none. */
  appendMany(hashes: readonly Buffer[]): void {
    hashes.forEach((hash, i) => {
      checkHash(hash, this.size + i);
    });
    for (const hash of hashes) this.#append(hash);
  }

  #append(hash: Uint8Array): void {
    let node: Uint8Array = hash;
    let index = this.size;
    for (let level = 0; ; level += 1) {
      const store = this.#levels[level] ?? new HashStore();
      if (level === this.#levels.length) this.#levels.push(store);
      store.push(node);
      // An even index starts a pair that is not complete yet; an odd one completes its parent.
      if (index % 2 === 0) return;
      node = nodeHash(store.get(index - 1), node);
      index = (index - 1) / 2;
    }
  }

  /**
   * MTH(D[start:end]) of RFC 9162 2.1.1 (SHA-256 of the empty string when start == end). O(log n)
   * node hashes when the range is a subtree of some tree's split, that is when start is a multiple of
   * the smallest power of two >= end - start (every range a proof asks for is); an arbitrary range
   * costs up to end - start. Throws a RangeError unless 0 <= start <= end <= size.
   */
  subtreeHash(start: number, end: number): Buffer {
    if (!Number.isSafeInteger(end) || end < 0 || end > this.size) throw new RangeError(`range end ${end} is outside 0..${this.size}`);
    if (!Number.isSafeInteger(start) || start < 0 || start > end) throw new RangeError(`range start ${start} is outside 0..${end}`);
    return start === end ? rootHash([]) : Buffer.from(this.#mth(start, end));
  }

  /** The Merkle Tree Hash of the first `treeSize` leaves (all of them by default), as rootHash(leaves, treeSize). */
  root(treeSize: number = this.size): Buffer {
    this.#checkTreeSize(treeSize);
    return treeSize === 0 ? rootHash([]) : Buffer.from(this.#mth(0, treeSize));
  }

  /**
   * The inclusion proof PATH(m, D[n]) of RFC 9162 2.1.3.1 for leaf `index` in the tree of the first
   * `treeSize` leaves, leaf's sibling first, as inclusionProof(leaves, index, treeSize).
   */
  inclusionProof(index: number, treeSize: number = this.size): Buffer[] {
    this.#checkTreeSize(treeSize);
    return inclusionPath(this.#subtree, index, treeSize);
  }

  /**
   * The consistency proof PROOF(m, D[n]) of RFC 9162 2.1.4.1 between the trees of the first `oldSize`
   * and `newSize` leaves, as consistencyProof(leaves, oldSize, newSize): empty when oldSize is 0 or
   * equal to newSize. Throws a RangeError unless 0 <= oldSize <= newSize <= size.
   */
  consistencyProof(oldSize: number, newSize: number = this.size): Buffer[] {
    this.#checkTreeSize(newSize);
    return consistencyPath(this.#subtree, oldSize, newSize);
  }

  /** The kit's proof walks read subtree hashes from the cached levels. */
  readonly #subtree = (lo: number, hi: number): Buffer => Buffer.from(this.#mth(lo, hi));

  #checkTreeSize(treeSize: number): void {
    if (!Number.isSafeInteger(treeSize) || treeSize < 0 || treeSize > this.size) throw new RangeError(`tree size ${treeSize} is outside 0..${this.size}`);
  }

  /** MTH(D[lo:hi]) for size >= hi > lo: a stored hash when the range is complete and aligned, else split as RFC 9162 does. */
  #mth(lo: number, hi: number): Uint8Array {
    const n = hi - lo;
    const level = exactLog2(n);
    if (level >= 0 && lo % n === 0) return (this.#levels[level] as HashStore).get(lo / n);
    const k = splitPoint(n);
    return nodeHash(this.#mth(lo, lo + k), this.#mth(lo + k, hi));
  }
}
