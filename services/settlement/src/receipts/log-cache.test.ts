import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { describe, it, mock } from 'node:test';
import { consistencyProof, inclusionProof, leafHash, rootHash, verifyConsistency, verifyInclusion } from '@platform/kit/receipt-log/merkle-log';
import { ReceiptLogCache } from './log-cache.ts';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Buffer => Buffer.from(s, 'hex');

/** The error a call throws, so the cache's messages can be compared with merkle-log.ts's. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new assert.AssertionError({ message: 'expected a throw' });
}

/** A small seeded PRNG (mulberry32), so a failing random case can be replayed. */
function prng(seed: number): (below: number) => number {
  let a = seed >>> 0;
  return (below) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * below);
  };
}

/**
 * How many SHA-256 computations `fn` makes: every hash in merkle-log.ts (and so in the cache) goes
 * through node:crypto's one-shot hash(), whose live ESM binding syncBuiltinESMExports points at the mock.
 */
function countHashes(fn: () => void): number {
  const spy = mock.method(crypto, 'hash');
  syncBuiltinESMExports();
  try {
    fn();
    return spy.mock.callCount();
  } finally {
    spy.mock.restore();
    syncBuiltinESMExports();
  }
}

const maxSize = 70;
const leaves = Array.from({ length: maxSize }, (_, i) => leafHash(Buffer.from(`receipt ${i}`)));
const full = new ReceiptLogCache();
full.appendMany(leaves);

describe('log-cache: the Certificate Transparency tree', () => {
  it('has the published roots for sizes 0..8', async () => {
    const ctLeaves = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((s) => leafHash(unhex(s)));
    const ctRoots = [
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
      'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
      '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
      'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
      '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
    ];
    const cache = new ReceiptLogCache();
    assert.equal(hex(cache.root()), ctRoots[0]);
    for (const leaf of ctLeaves) {
      cache.append(leaf);
      assert.equal(hex(cache.root()), ctRoots[cache.size], `size ${cache.size}`);
    }
    for (let n = 0; n <= 8; n++) assert.equal(hex(cache.root(n)), ctRoots[n], `root(${n}) of 8`);
  });
});

describe('log-cache: equal to merkle-log.ts for every size 1..70', () => {
  it('root equals rootHash for every prefix size while appending, and for every earlier size afterwards', async () => {
    const cache = new ReceiptLogCache();
    assert.equal(cache.size, 0);
    assert.equal(hex(cache.root()), hex(rootHash([])));
    for (const [i, leaf] of leaves.entries()) {
      cache.append(leaf);
      assert.equal(cache.size, i + 1);
      assert.equal(hex(cache.root()), hex(rootHash(leaves, i + 1)), `size ${i + 1}`);
    }
    for (let n = 0; n <= maxSize; n++) assert.equal(hex(full.root(n)), hex(rootHash(leaves, n)), `root(${n}) of ${maxSize}`);
  });

  it('gives the same inclusion proof for every index of every size, by default size while growing and by tree size when full, and they verify', async () => {
    const growing = new ReceiptLogCache();
    for (let n = 1; n <= maxSize; n++) {
      growing.append(leaves[n - 1] as Buffer);
      const root = rootHash(leaves, n);
      for (let i = 0; i < n; i++) {
        const expected = inclusionProof(leaves, i, n).map(hex);
        const proof = full.inclusionProof(i, n);
        assert.deepEqual(proof.map(hex), expected, `leaf ${i} of ${n}`);
        assert.deepEqual(growing.inclusionProof(i).map(hex), expected, `leaf ${i} of ${n}, default size`);
        assert.equal(await verifyInclusion(leaves[i] as Buffer, i, n, proof, root), true, `verify leaf ${i} of ${n}`);
      }
    }
  });

  it('gives the same consistency proof for every 0 <= m <= n, by default size while growing and by tree size when full, and they verify', async () => {
    const growing = new ReceiptLogCache();
    for (let n = 1; n <= maxSize; n++) {
      growing.append(leaves[n - 1] as Buffer);
      const newRoot = rootHash(leaves, n);
      for (let m = 0; m <= n; m++) {
        const expected = consistencyProof(leaves, m, n).map(hex);
        const proof = full.consistencyProof(m, n);
        assert.deepEqual(proof.map(hex), expected, `${m} → ${n}`);
        assert.deepEqual(growing.consistencyProof(m).map(hex), expected, `${m} → ${n}, default size`);
        assert.equal(await verifyConsistency(m, n, rootHash(leaves, m), newRoot, proof), true, `verify ${m} → ${n}`);
      }
    }
    assert.deepEqual(full.consistencyProof(0, 0), []);
    assert.deepEqual(new ReceiptLogCache().consistencyProof(0), []);
  });

  it('subtreeHash equals rootHash of the slice for every range 0 <= start <= end <= 70, aligned or not', async () => {
    for (let end = 0; end <= maxSize; end++) {
      for (let start = 0; start <= end; start++) {
        assert.equal(hex(full.subtreeHash(start, end)), hex(rootHash(leaves.slice(start, end))), `[${start}, ${end})`);
      }
    }
  });
});

describe('log-cache: 5,000 leaves against the O(n) functions', () => {
  const size = 5000;
  const big = Array.from({ length: size }, (_, i) => leafHash(Buffer.from(`big receipt ${i}`)));
  const cache = new ReceiptLogCache();
  cache.appendMany(big);
  const random = prng(0x9162);
  // Edges of the tree shape: powers of two and their neighbours, the smallest and the largest sizes.
  const edgeSizes = [1, 2, 3, 1023, 1024, 1025, 4095, 4096, 4097, size - 1, size];
  const randomSize = (): number => 1 + random(size);

  it('agrees on the root for edge and random sizes', async () => {
    for (const n of [...edgeSizes, ...Array.from({ length: 30 }, randomSize)]) {
      assert.equal(hex(cache.root(n)), hex(rootHash(big, n)), `size ${n}`);
    }
  });

  it('agrees on inclusion proofs for edge and random (index, size), and they verify', async () => {
    const cases = edgeSizes.flatMap((n) => [
      [0, n],
      [n - 1, n],
      [random(n), n],
    ]);
    for (let j = 0; j < 40; j++) {
      const n = randomSize();
      cases.push([random(n), n]);
    }
    for (const [i, n] of cases as [number, number][]) {
      const proof = cache.inclusionProof(i, n);
      assert.deepEqual(proof.map(hex), inclusionProof(big, i, n).map(hex), `leaf ${i} of ${n}`);
      assert.equal(await verifyInclusion(big[i] as Buffer, i, n, proof, cache.root(n)), true, `verify leaf ${i} of ${n}`);
    }
  });

  it('agrees on consistency proofs for edge and random (old size, new size), and they verify', async () => {
    const cases = edgeSizes.flatMap((n) => [
      [1, n],
      [n - 1, n],
      [random(n + 1), n],
      [n, size],
    ]);
    for (let j = 0; j < 40; j++) {
      const n = randomSize();
      cases.push([random(n + 1), n]);
    }
    for (const [m, n] of cases as [number, number][]) {
      const proof = cache.consistencyProof(m, n);
      assert.deepEqual(proof.map(hex), consistencyProof(big, m, n).map(hex), `${m} → ${n}`);
      assert.equal(await verifyConsistency(m, n, cache.root(m), cache.root(n), proof), true, `verify ${m} → ${n}`);
    }
  });

  it('does O(log n) hashing: root, every proof and every proof-shaped subtree hash take at most ⌈log2 n⌉ + 1 hashes', async () => {
    // The counter works: merkle-log.ts's O(n) root hashes 4,999 nodes.
    assert.equal(
      countHashes(() => rootHash(big)),
      size - 1,
    );
    for (let j = 0; j < 200; j++) {
      const n = randomSize();
      const bound = Math.ceil(Math.log2(n)) + 1;
      const i = random(n);
      const m = random(n + 1);
      assert.ok(countHashes(() => cache.root(n)) <= bound, `root(${n})`);
      assert.ok(countHashes(() => cache.inclusionProof(i, n)) <= bound, `inclusion ${i} of ${n}`);
      assert.ok(countHashes(() => cache.consistencyProof(m, n)) <= bound, `consistency ${m} → ${n}`);
      // A proof-shaped range: start a multiple of a power of two w, length at most w.
      const w = 2 ** random(13);
      const start = w * random(Math.ceil(size / w));
      const end = Math.min(size, start + 1 + random(w));
      assert.ok(countHashes(() => cache.subtreeHash(start, end)) <= Math.log2(w) + 1, `subtreeHash(${start}, ${end})`);
    }
    // Appending costs one node hash per leaf on average: one per complete subtree, n - popcount(n) in all (5000 has 5 bits set).
    assert.equal(
      countHashes(() => new ReceiptLogCache().appendMany(big)),
      size - 5,
    );
  });
});

describe('log-cache: appending', () => {
  it('appendMany equals repeated append, in batches of any size (empty ones too)', async () => {
    const one = new ReceiptLogCache();
    for (const leaf of leaves) one.append(leaf);
    const batched = new ReceiptLogCache();
    const batchSizes = [0, 1, 3, 0, 7, 16, 2, 41];
    let at = 0;
    for (const b of batchSizes) {
      batched.appendMany(leaves.slice(at, at + b));
      at += b;
    }
    assert.equal(at, maxSize);
    assert.equal(batched.size, one.size);
    for (let n = 0; n <= maxSize; n++) assert.equal(hex(batched.root(n)), hex(one.root(n)), `root(${n})`);
    for (let i = 0; i < maxSize; i++) assert.deepEqual(batched.inclusionProof(i).map(hex), one.inclusionProof(i).map(hex), `leaf ${i}`);
    for (let m = 0; m <= maxSize; m++) assert.deepEqual(batched.consistencyProof(m).map(hex), one.consistencyProof(m).map(hex), `${m} → ${maxSize}`);
  });

  it('copies hashes in and out: mutating an appended leaf or a returned hash changes nothing', async () => {
    const cache = new ReceiptLogCache();
    const mine = leaves.slice(0, 5).map((b) => Buffer.from(b));
    cache.appendMany(mine);
    const before = hex(cache.root());
    for (const b of mine) b.fill(0);
    assert.equal(hex(cache.root()), before);
    cache.root().fill(0);
    cache.root(4).fill(0);
    cache.subtreeHash(4, 5).fill(0);
    for (const p of cache.inclusionProof(4)) p.fill(0);
    for (const p of cache.consistencyProof(3)) p.fill(0);
    assert.equal(hex(cache.root()), before);
    assert.equal(hex(cache.root(4)), hex(rootHash(leaves, 4)));
    assert.deepEqual(cache.inclusionProof(4).map(hex), inclusionProof(leaves, 4, 5).map(hex));
  });
});

describe('log-cache: argument errors', () => {
  const cache = new ReceiptLogCache();
  cache.appendMany(leaves.slice(0, 8));
  const eight = leaves.slice(0, 8);

  it('append and appendMany take 32-byte Buffers only, and a bad batch appends nothing', async () => {
    for (const bad of [Buffer.alloc(31), Buffer.alloc(33), Buffer.alloc(0)]) {
      assert.throws(() => cache.append(bad), { name: 'RangeError', message: `leaf hash 8 is ${bad.length} bytes, not 32` });
    }
    assert.throws(() => cache.append('00'.repeat(32) as unknown as Buffer), TypeError);
    assert.throws(() => cache.append(undefined as unknown as Buffer), TypeError);
    assert.throws(() => cache.appendMany([leaves[8] as Buffer, Buffer.alloc(16), leaves[10] as Buffer]), {
      name: 'RangeError',
      message: /leaf hash 9 is 16 bytes/,
    });
    assert.equal(cache.size, 8);
    assert.equal(hex(cache.root()), hex(rootHash(eight)));
  });

  it('root, inclusionProof and consistencyProof throw the RangeError merkle-log.ts throws for the same arguments', async () => {
    const sizes = [-1, 9, 1.5, Number.NaN, Number.POSITIVE_INFINITY];
    for (const n of sizes) {
      assert.throws(() => cache.root(n), { name: 'RangeError', message: thrown(() => rootHash(eight, n)).message });
      assert.throws(() => cache.inclusionProof(0, n), { name: 'RangeError', message: thrown(() => inclusionProof(eight, 0, n)).message });
      assert.throws(() => cache.consistencyProof(0, n), { name: 'RangeError', message: thrown(() => consistencyProof(eight, 0, n)).message });
    }
    for (const [i, n] of [
      [8, 8],
      [-1, 8],
      [0.5, 8],
      [Number.NaN, 8],
      [3, 3],
      [0, 0],
    ] as const) {
      assert.throws(() => cache.inclusionProof(i, n), { name: 'RangeError', message: thrown(() => inclusionProof(eight, i, n)).message });
    }
    for (const [m, n] of [
      [9, 8],
      [4, 3],
      [-1, 8],
      [2.5, 8],
      [Number.NaN, 8],
      [1, 0],
    ] as const) {
      assert.throws(() => cache.consistencyProof(m, n), { name: 'RangeError', message: thrown(() => consistencyProof(eight, m, n)).message });
    }
    assert.throws(() => cache.inclusionProof(8), { name: 'RangeError', message: 'leaf index 8 is outside 0..7' });
    assert.throws(() => cache.consistencyProof(9), { name: 'RangeError', message: 'old size 9 is outside 0..8' });
    assert.throws(() => new ReceiptLogCache().inclusionProof(0), { name: 'RangeError', message: 'leaf index 0 is outside 0..-1' });
    assert.throws(() => new ReceiptLogCache().root(1), { name: 'RangeError', message: 'tree size 1 is outside 0..0' });
  });

  it('subtreeHash needs 0 <= start <= end <= size', async () => {
    assert.throws(() => cache.subtreeHash(0, 9), { name: 'RangeError', message: 'range end 9 is outside 0..8' });
    assert.throws(() => cache.subtreeHash(0, -1), { name: 'RangeError', message: 'range end -1 is outside 0..8' });
    assert.throws(() => cache.subtreeHash(5, 4), { name: 'RangeError', message: 'range start 5 is outside 0..4' });
    assert.throws(() => cache.subtreeHash(-1, 4), { name: 'RangeError', message: 'range start -1 is outside 0..4' });
    assert.throws(() => cache.subtreeHash(0.5, 4), RangeError);
    assert.throws(() => cache.subtreeHash(0, Number.NaN), RangeError);
    assert.equal(hex(cache.subtreeHash(8, 8)), hex(rootHash([])));
  });
});
