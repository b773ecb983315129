import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { consistencyProof, inclusionProof, leafHash, nodeHash, rootHash, verifyConsistency, verifyInclusion } from './merkle-log.ts';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Buffer => Buffer.from(s, 'hex');
const sha256 = (...parts: Uint8Array[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();

/** A copy of `b` with byte `at` xor-ed, so every position of every hash can be tampered with. */
function flipped(b: Uint8Array, at: number): Buffer {
  const copy = Buffer.from(b);
  copy[at % copy.length] = (copy[at % copy.length] as number) ^ 0x01;
  return copy;
}

// The tree of Certificate Transparency's reference tests (RFC 6962 / 9162 implementations all ship it).
const ctLeaves = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(unhex);
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
const h = {
  n1: '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
  n0_2: 'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  n2_4: '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
  n4: 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
  n6: 'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
  n4_6: '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
  n6_8: 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
  n0_4: 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  n4_8: '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
  n0: '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
};
const ctInclusion: [number, number, string[]][] = [
  [0, 1, []],
  [0, 8, [h.n1, h.n2_4, h.n4_8]],
  [5, 8, [h.n4, h.n6_8, h.n0_4]],
  [2, 3, [h.n0_2]],
  [1, 5, [h.n0, h.n2_4, h.n4]],
];
const ctConsistency: [number, number, string[]][] = [
  [1, 1, []],
  [1, 8, [h.n1, h.n2_4, h.n4_8]],
  [6, 8, [h.n4_6, h.n6_8, h.n0_4]],
  [2, 5, [h.n2_4, h.n4]],
  [6, 7, [h.n4_6, h.n6, h.n0_4]],
];

// A naive transcription of RFC 9162 2.1 over slices of raw data, sharing no code with the module.
function refSplit(n: number): number {
  return 2 ** Math.ceil(Math.log2(n) - 1);
}
function refMth(d: Buffer[]): Buffer {
  if (d.length === 0) return sha256();
  if (d.length === 1) return sha256(Buffer.of(0), d[0] as Buffer);
  const k = refSplit(d.length);
  return sha256(Buffer.of(1), refMth(d.slice(0, k)), refMth(d.slice(k)));
}
function refPath(m: number, d: Buffer[]): Buffer[] {
  if (d.length === 1) return [];
  const k = refSplit(d.length);
  return m < k ? [...refPath(m, d.slice(0, k)), refMth(d.slice(k))] : [...refPath(m - k, d.slice(k)), refMth(d.slice(0, k))];
}
function refSubproof(m: number, d: Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [refMth(d)];
  const k = refSplit(d.length);
  return m <= k ? [...refSubproof(m, d.slice(0, k), b), refMth(d.slice(k))] : [...refSubproof(m - k, d.slice(k), false), refMth(d.slice(0, k))];
}

const emptyRoot = rootHash([]);
// Every size up to here, exhaustively: past 32 every tree shape has six levels and a ragged right edge, which is what
// the walks get wrong; 64 cost two minutes of CI (each verification hashes through WebCrypto) and found nothing more.
const maxSize = 40;
const data = Array.from({ length: maxSize }, (_, i) => Buffer.from(`receipt ${i}`));
const leaves = data.map(leafHash);
const roots = Array.from({ length: maxSize + 1 }, (_, n) => rootHash(leaves, n));

describe('merkle-log: Certificate Transparency known answers', () => {
  const ctLeafHashes = ctLeaves.map(leafHash);

  it('hashes leaves as SHA-256(0x00 || data), nodes as SHA-256(0x01 || left || right), the empty tree as SHA-256("")', async () => {
    assert.equal(hex(emptyRoot), ctRoots[0]);
    assert.equal(hex(rootHash([])), hex(sha256()));
    assert.equal(hex(leafHash(Buffer.alloc(0))), h.n0);
    assert.equal(hex(leafHash(unhex('2021'))), hex(sha256(unhex('002021'))));
    assert.equal(hex(nodeHash(unhex('aa'), unhex('bb'))), hex(sha256(unhex('01aabb'))));
  });

  it('computes the published root for every size 1..8, from a slice and from a tree-size argument', async () => {
    for (let n = 1; n <= 8; n++) {
      assert.equal(hex(rootHash(ctLeafHashes.slice(0, n))), ctRoots[n], `size ${n}`);
      assert.equal(hex(rootHash(ctLeafHashes, n)), ctRoots[n], `size ${n} by argument`);
    }
  });

  it('produces the published inclusion proofs, and they verify', async () => {
    for (const [index, size, expected] of ctInclusion) {
      const proof = inclusionProof(ctLeafHashes, index, size);
      assert.deepEqual(proof.map(hex), expected, `leaf ${index} of ${size}`);
      assert.equal(await verifyInclusion(ctLeafHashes[index] as Buffer, index, size, expected.map(unhex), unhex(ctRoots[size] as string)), true);
    }
  });

  it('produces the published consistency proofs, and they verify', async () => {
    for (const [m, n, expected] of ctConsistency) {
      const proof = consistencyProof(ctLeafHashes, m, n);
      assert.deepEqual(proof.map(hex), expected, `${m} → ${n}`);
      assert.equal(await verifyConsistency(m, n, unhex(ctRoots[m] as string), unhex(ctRoots[n] as string), expected.map(unhex)), true);
    }
  });
});

describe('merkle-log: against a naive recursive reference', () => {
  it('agrees on the root for sizes 0..40 (the empty tree included)', async () => {
    for (let n = 0; n <= maxSize; n++) assert.equal(hex(roots[n] as Buffer), hex(refMth(data.slice(0, n))), `size ${n}`);
  });

  it('agrees on every inclusion proof and every consistency proof up to size 40', async () => {
    for (let n = 1; n <= maxSize; n++) {
      const d = data.slice(0, n);
      for (let i = 0; i < n; i++) assert.deepEqual(inclusionProof(leaves, i, n).map(hex), refPath(i, d).map(hex), `leaf ${i} of ${n}`);
      for (let m = 1; m <= n; m++) assert.deepEqual(consistencyProof(leaves, m, n).map(hex), refSubproof(m, d, true).map(hex), `${m} → ${n}`);
    }
  });
});

describe('merkle-log: inclusion proofs for every size 1..40 and every index', () => {
  it('verify, and fail on any flipped byte of the leaf, the root or any proof element', async () => {
    for (let n = 1; n <= maxSize; n++) {
      const root = roots[n] as Buffer;
      for (let i = 0; i < n; i++) {
        const leaf = leaves[i] as Buffer;
        const proof = inclusionProof(leaves, i, n);
        assert.equal(await verifyInclusion(leaf, i, n, proof, root), true, `leaf ${i} of ${n}`);
        assert.equal(await verifyInclusion(flipped(leaf, i + n), i, n, proof, root), false, `leaf flipped, ${i} of ${n}`);
        assert.equal(await verifyInclusion(leaf, i, n, proof, flipped(root, i)), false, `root flipped, ${i} of ${n}`);
        for (let j = 0; j < proof.length; j++) {
          const bad = proof.map((p, k) => (k === j ? flipped(p, i + j) : p));
          assert.equal(await verifyInclusion(leaf, i, n, bad, root), false, `element ${j} flipped, ${i} of ${n}`);
        }
      }
    }
  });

  // Every index against every other, and every size against every other, is cubic: sizes up to 20 (trees of depth 5,
  // perfect at 16 and ragged around it) cover every shape a proof takes, at a seventh of the cost of going to 40.
  it('fail for any other index, and for any other size checked against that size’s own root (sizes 1..20)', async () => {
    const pairSize = 20;
    for (let n = 1; n <= pairSize; n++) {
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(leaves, i, n);
        for (let j = 0; j < n; j++) {
          if (j !== i) assert.equal(await verifyInclusion(leaves[i] as Buffer, j, n, proof, roots[n] as Buffer), false, `leaf ${i} claimed as ${j} of ${n}`);
        }
        // A size means something only with its own root: together they are what a checkpoint signs.
        for (let s = i + 1; s <= pairSize; s++) {
          if (s !== n) assert.equal(await verifyInclusion(leaves[i] as Buffer, i, s, proof, roots[s] as Buffer), false, `proof for ${i} of ${n} as size ${s}`);
        }
        assert.equal(await verifyInclusion(leaves[i] as Buffer, i, i, proof, roots[n] as Buffer), false, 'index == size');
      }
    }
  });

  it('fail with an element added at either end, or removed from either end', async () => {
    const extra = leafHash(Buffer.from('extra'));
    for (let n = 1; n <= maxSize; n++) {
      for (let i = 0; i < n; i++) {
        const [leaf, root, proof] = [leaves[i] as Buffer, roots[n] as Buffer, inclusionProof(leaves, i, n)];
        const longer = [
          [...proof, extra],
          [extra, ...proof],
          [...proof, root],
          [...proof, ...proof.slice(-1)],
        ].filter((bad) => bad.length > proof.length);
        assert.equal(longer.length, proof.length > 0 ? 4 : 3);
        for (const bad of longer) {
          assert.equal(await verifyInclusion(leaf, i, n, bad, root), false, `longer proof, ${i} of ${n}`);
        }
        if (proof.length > 0) {
          assert.equal(await verifyInclusion(leaf, i, n, proof.slice(1), root), false, `first dropped, ${i} of ${n}`);
          assert.equal(await verifyInclusion(leaf, i, n, proof.slice(0, -1), root), false, `last dropped, ${i} of ${n}`);
        }
      }
    }
  });

  it('refuse malformed arguments without throwing, and the generator throws on a caller bug', async () => {
    const proof = inclusionProof(leaves, 3, 8);
    const root = roots[8] as Buffer;
    assert.equal(await verifyInclusion(leaves[3] as Buffer, 3, 8, proof, root), true);
    for (const [index, size] of [
      [-1, 8],
      [3.5, 8],
      [Number.NaN, 8],
      [3, Number.POSITIVE_INFINITY],
      [8, 8],
      [9, 8],
      [3, -8],
    ] as const) {
      assert.equal(await verifyInclusion(leaves[3] as Buffer, index, size, proof, root), false, `index ${index}, size ${size}`);
    }
    assert.equal(await verifyInclusion((leaves[3] as Buffer).subarray(0, 31), 3, 8, proof, root), false, 'short leaf hash');
    assert.equal(await verifyInclusion(leaves[3] as Buffer, 3, 8, proof, Buffer.concat([root, Buffer.of(0)])), false, 'long root');
    assert.equal(await verifyInclusion(leaves[3] as Buffer, 3, 8, [...proof.slice(0, 2), Buffer.alloc(0)], root), false, 'empty element');
    assert.throws(() => inclusionProof(leaves, 8, 8), RangeError);
    assert.throws(() => inclusionProof(leaves, -1, 8), RangeError);
    assert.throws(() => inclusionProof(leaves, 0, maxSize + 1), RangeError);
    assert.throws(() => inclusionProof([], 0), RangeError);
  });
});

describe('merkle-log: consistency proofs for every size 1..40 and every old size', () => {
  it('verify for every 0 <= m <= n, and fail on any flipped byte of either root or any element', async () => {
    for (let n = 1; n <= maxSize; n++) {
      for (let m = 0; m <= n; m++) {
        const [oldRoot, newRoot, proof] = [roots[m] as Buffer, roots[n] as Buffer, consistencyProof(leaves, m, n)];
        assert.equal(await verifyConsistency(m, n, oldRoot, newRoot, proof), true, `${m} → ${n}`);
        assert.equal(await verifyConsistency(m, n, flipped(oldRoot, m + n), newRoot, proof), false, `old root flipped, ${m} → ${n}`);
        // With m = 0 nothing binds the new root (every tree extends the empty one), so only m > 0 must notice it.
        if (m > 0) assert.equal(await verifyConsistency(m, n, oldRoot, flipped(newRoot, m), proof), false, `new root flipped, ${m} → ${n}`);
        for (let j = 0; j < proof.length; j++) {
          const bad = proof.map((p, k) => (k === j ? flipped(p, m + j) : p));
          assert.equal(await verifyConsistency(m, n, oldRoot, newRoot, bad), false, `element ${j} flipped, ${m} → ${n}`);
        }
      }
    }
  });

  it('fail for a neighbouring old or new size checked against that size’s own root, and for a shrinking log', async () => {
    for (let n = 2; n <= maxSize; n++) {
      for (let m = 1; m < n; m++) {
        const proof = consistencyProof(leaves, m, n);
        for (const [a, b] of [
          [m - 1, n],
          [m + 1, n],
          [m, n - 1],
          [m, n + 1],
        ] as const) {
          if (b > maxSize || a > b) continue;
          assert.equal(await verifyConsistency(a, b, roots[a] as Buffer, roots[b] as Buffer, proof), false, `proof ${m} → ${n} as ${a} → ${b}`);
        }
        assert.equal(await verifyConsistency(n, m, roots[n] as Buffer, roots[m] as Buffer, proof), false, `reversed ${n} → ${m}`);
      }
    }
  });

  it('fail with an element added at either end or removed from either end, including the old root a power-of-two proof omits', async () => {
    const extra = leafHash(Buffer.from('extra'));
    for (let n = 2; n <= maxSize; n++) {
      for (let m = 1; m < n; m++) {
        const [oldRoot, newRoot, proof] = [roots[m] as Buffer, roots[n] as Buffer, consistencyProof(leaves, m, n)];
        for (const bad of [[...proof, extra], [extra, ...proof], [oldRoot, ...proof], [...proof, newRoot], proof.slice(1), proof.slice(0, -1)]) {
          assert.equal(await verifyConsistency(m, n, oldRoot, newRoot, bad), false, `${bad.length} elements for ${m} → ${n}`);
        }
      }
    }
  });

  it('needs sn to end at 0 (RFC 9162 2.1.4.2 step 7): the proof for 1 → 2 does not pass as 1 → 3 or 1 → 4 with the same roots', async () => {
    const [r1, r2, proof] = [roots[1] as Buffer, roots[2] as Buffer, consistencyProof(leaves, 1, 2)];
    assert.equal(await verifyConsistency(1, 2, r1, r2, proof), true);
    assert.equal(await verifyConsistency(1, 3, r1, r2, proof), false);
    assert.equal(await verifyConsistency(1, 4, r1, r2, proof), false);
  });

  it('equal sizes need an empty proof and equal roots; old size 0 needs an empty proof and the empty-tree root', async () => {
    const [r5, r6] = [roots[5] as Buffer, roots[6] as Buffer];
    assert.equal(await verifyConsistency(5, 5, r5, r5, []), true);
    assert.equal(await verifyConsistency(5, 5, r5, r6, []), false);
    assert.equal(await verifyConsistency(5, 5, r5, r5, [r5]), false);
    assert.equal(await verifyConsistency(0, 6, emptyRoot, r6, []), true);
    assert.equal(await verifyConsistency(0, 6, r5, r6, []), false);
    assert.equal(await verifyConsistency(0, 6, emptyRoot, r6, [r6]), false);
    assert.equal(await verifyConsistency(0, 0, emptyRoot, emptyRoot, []), true);
    assert.equal(await verifyConsistency(0, 0, emptyRoot, r5, []), false);
    assert.equal(await verifyConsistency(0, 0, r5, r5, []), false);
    assert.deepEqual(consistencyProof(leaves, 0, 6), []);
  });

  it('refuse malformed arguments without throwing, and the generator throws on a caller bug', async () => {
    const [r3, r8, proof] = [roots[3] as Buffer, roots[8] as Buffer, consistencyProof(leaves, 3, 8)];
    assert.equal(await verifyConsistency(3, 8, r3, r8, proof), true);
    for (const [m, n] of [
      [-1, 8],
      [3.5, 8],
      [Number.NaN, 8],
      [3, Number.POSITIVE_INFINITY],
    ] as const) {
      assert.equal(await verifyConsistency(m, n, r3, r8, proof), false, `${m} → ${n}`);
    }
    // Without the explicit size check the RFC loop would accept this: one element, sn already 0.
    assert.equal(await verifyConsistency(3, 1, r3, r3, [r3]), false, 'a shrinking log');
    assert.equal(await verifyConsistency(3, 8, r3.subarray(1), r8, proof), false, 'short old root');
    assert.equal(await verifyConsistency(3, 8, r3, r8, [...proof.slice(0, -1), Buffer.alloc(33)]), false, 'long element');
    assert.throws(() => consistencyProof(leaves, 9, 8), RangeError);
    assert.throws(() => consistencyProof(leaves, 1, maxSize + 1), RangeError);
  });
});

describe('merkle-log: sizes beyond 32 bits', () => {
  // Bitwise operators would truncate 2^32 to 0; the verifiers must use arithmetic. Only verification scales this far.
  const big = 2 ** 32;
  const left = sha256(Buffer.from('root of the first 2^32 leaves'));
  const last = leafHash(Buffer.from('leaf 2^32'));

  it('verifies inclusion of the leaf at index 2^32 in a tree of 2^32 + 1', async () => {
    const root = nodeHash(left, last);
    assert.equal(await verifyInclusion(last, big, big + 1, [left], root), true);
    assert.equal(await verifyInclusion(last, big - 1, big + 1, [left], root), false);
    assert.equal(await verifyInclusion(last, big, big + 2, [left], root), false);
  });

  it('verifies consistency from 2^32 (a power of two) to 2^32 + 1', async () => {
    const root = nodeHash(left, last);
    assert.equal(await verifyConsistency(big, big + 1, left, root, [last]), true);
    assert.equal(await verifyConsistency(big, big + 1, left, root, [left, last]), false);
    assert.equal(await verifyConsistency(big - 1, big + 1, left, root, [last]), false);
  });
});
