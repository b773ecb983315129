import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { maxAmountMicros } from '@platform/kit/money';
import { keccak256 } from 'ethereum-cryptography/keccak';
import {
  accountHash,
  type BalanceInput,
  type BalanceLeafValue,
  type BalanceTree,
  balanceLeafEncoding,
  balanceLeafHash,
  balanceLeafTag,
  buildBalanceTree,
  loadBalanceTree,
  newLeafMemo,
  verifyBalanceProof,
  zeroAddress,
} from './balance-tree.ts';

const alice = 'did:platform:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:0123456789abcdef';
const bob = 'did:platform:bob:fedcba9876543210';
const carol = 'did:platform:carol:00112233aabbccdd';
const alicePayout = '0x00000000000000000000000000000000000000a1';
// EIP-55 spelling in, lowercase in the leaf.
const carolPayout = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const three: BalanceInput[] = [
  { did: alice, payout: alicePayout, micros: 1_500_000n },
  { did: bob, payout: null, micros: 0n },
  { did: carol, payout: carolPayout, micros: maxAmountMicros },
];

// Computed once with viem's keccak256 and encodeAbiParameters (another implementation than ours) and the
// package's StandardMerkleTree.of; the account hash is v1's, cross-checked then against a Keccak-256 written in
// Python from the FIPS 202 permutation.
const vector = {
  tag: '0xc7e08bbc28430eaed2e0c4d1f9463b7e0fb82149497e7c6455e373771eeda829',
  aliceAccount: '0xb65b470e8c234eec28dc32fb62bb4e2ca5b3f0b866139f616a2ea8080c5b9bad',
  leaves: {
    alice: '0xdaeac0f3d765f427eacdeacc1ddcc2746138b37c99b0ec34d76e336b039215e1',
    bob: '0x09b07388e6cbc6a705d5b14350add8fdd6c43a2618108d72ef4981467ce1a18e',
    carol: '0x1f6a1f3c9c7daf204d4e65229e1c1609fa732ab9d4ff103dcaa5569ed478f310',
  },
  root: '0xbc869b86043bbbf58f3cd66bd6d80f2d6804dfe5badabcfcfbec1981ba536edc',
};

/** Accounts did:platform:acct<i>:<16 hex>, balances spread over the range, zero included; every other one has a payout address. */
function accounts(n: number): BalanceInput[] {
  return Array.from({ length: n }, (_, i) => ({
    did: `did:platform:acct${i}:${(0x1000 + i).toString(16).padStart(16, '0')}`,
    payout: i % 2 === 0 ? `0x${(0xa000 + i).toString(16).padStart(40, '0')}` : null,
    micros: (BigInt(i) * 7_919_000_003n) % (maxAmountMicros + 1n),
  }));
}

const leafPayout = (payout: string | null): string => payout?.toLowerCase() ?? zeroAddress;

const ozValue = (tree: BalanceTree, did: string): BalanceLeafValue => {
  const proof = tree.proofFor(did);
  assert.ok(proof, `no proof for ${did}`);
  return [proof.leaf.tag, proof.leaf.account, proof.leaf.payout, proof.leaf.micros.toString()];
};

function flip(hex: string, at: number): string {
  const bytes = Buffer.from(hex.slice(2), 'hex');
  bytes[at % 32] = (bytes[at % 32] as number) ^ 0x01;
  return `0x${bytes.toString('hex')}`;
}

describe('balance tree: fixed vectors', () => {
  it('fixes the hash function, the type tag and the encoding', () => {
    assert.equal(Buffer.from(keccak256(new Uint8Array())).toString('hex'), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    assert.equal(balanceLeafTag, vector.tag);
    assert.deepEqual(balanceLeafEncoding, ['bytes32', 'bytes32', 'address', 'uint256']);
    assert.equal(accountHash(alice), vector.aliceAccount);
  });

  it('gives the literal leaf hashes and root for a fixed three-account set', () => {
    const tree = buildBalanceTree(three);
    assert.equal(tree.root, vector.root);
    assert.equal(tree.size, 3);
    assert.equal(balanceLeafHash(alice, alicePayout, 1_500_000n), vector.leaves.alice);
    assert.equal(balanceLeafHash(bob, null, 0n), vector.leaves.bob);
    assert.equal(balanceLeafHash(carol, carolPayout, maxAmountMicros), vector.leaves.carol);
    assert.equal(tree.proofFor(bob)?.leaf.hash, vector.leaves.bob);
    assert.equal(tree.proofFor(bob)?.leaf.payout, zeroAddress);
    assert.equal(tree.proofFor(carol)?.leaf.payout, carolPayout.toLowerCase());
  });

  it('writes the leaf as keccak256(keccak256(tag || keccak256(did) || address payout || uint256 balance)), 128 bytes of static words', () => {
    const word = (n: bigint): Buffer => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
    const encoded = Buffer.concat([
      Buffer.from(vector.tag.slice(2), 'hex'),
      Buffer.from(vector.aliceAccount.slice(2), 'hex'),
      word(BigInt(alicePayout)),
      word(1_500_000n),
    ]);
    assert.equal(encoded.length, 128);
    assert.equal(`0x${Buffer.from(keccak256(keccak256(encoded))).toString('hex')}`, vector.leaves.alice);
  });
});

describe('balance tree: agrees with @openzeppelin/merkle-tree', () => {
  it('a memo carried across builds changes nothing in the result, also after balances move', () => {
    const memo = newLeafMemo();
    const set = accounts(40);
    assert.deepEqual(buildBalanceTree(set, memo).dump(), buildBalanceTree(set).dump());
    const moved = set.map((entry, index) => (index % 3 === 0 ? { ...entry, micros: entry.micros + 7n } : entry));
    assert.deepEqual(buildBalanceTree(moved, memo).dump(), buildBalanceTree(moved).dump());
    assert.notEqual(buildBalanceTree(moved, memo).root, buildBalanceTree(set).root);
    // A new payout binding with the same balance is a new leaf too.
    const rebound = moved.map((entry, index) => (index === 1 ? { ...entry, payout: '0x00000000000000000000000000000000000000b0' } : entry));
    assert.deepEqual(buildBalanceTree(rebound, memo).dump(), buildBalanceTree(rebound).dump());
    assert.notEqual(buildBalanceTree(rebound, memo).root, buildBalanceTree(moved).root);
  });
  for (const n of [1, 2, 3, 7, 16, 17, 100, 257]) {
    it(`${n} accounts: the dump is byte for byte what StandardMerkleTree.of builds from the same values`, () => {
      const tree = buildBalanceTree(accounts(n));
      const dump = tree.dump();
      const oz = StandardMerkleTree.of(
        dump.values.map((entry) => entry.value),
        [...balanceLeafEncoding],
        { sortLeaves: true },
      );
      assert.deepEqual(dump, oz.dump());
    });
  }
  for (const n of [1, 2, 3, 4, 5, 8, 13, 32, 33]) {
    it(`${n} accounts: every proof verifies by hand and with StandardMerkleTree.verify; leaf hashes agree`, () => {
      const set = accounts(n);
      const tree = buildBalanceTree(set);
      const oz = StandardMerkleTree.load(tree.dump());
      assert.equal(oz.root, tree.root);
      for (const { did, payout, micros } of set) {
        const proof = tree.proofFor(did);
        assert.ok(proof);
        const value = ozValue(tree, did);
        assert.deepEqual(value, [balanceLeafTag, accountHash(did), leafPayout(payout), micros.toString()]);
        assert.equal(balanceLeafHash(did, payout, micros), oz.leafHash(value));
        assert.equal(proof.leaf.hash, oz.leafHash(value));
        assert.deepEqual(proof.proof, oz.getProof(value));
        assert.equal(verifyBalanceProof(tree.root, did, payout, micros, proof.proof), true, did);
        assert.equal(StandardMerkleTree.verify(tree.root, [...balanceLeafEncoding], value, proof.proof), true, did);
      }
    });
  }

  it('a one-account tree has the leaf hash as its root and an empty proof', () => {
    const tree = buildBalanceTree([{ did: bob, payout: null, micros: 5n }]);
    assert.equal(tree.root, balanceLeafHash(bob, null, 5n));
    assert.deepEqual(tree.proofFor(bob)?.proof, []);
    assert.equal(verifyBalanceProof(tree.root, bob, null, 5n, []), true);
  });

  it('both verifiers refuse another balance, another account, another payout, another root and a damaged proof', () => {
    const set = accounts(13);
    const tree = buildBalanceTree(set);
    const { did, payout, micros } = set[6] as BalanceInput;
    const proof = tree.proofFor(did)?.proof ?? [];
    assert.equal(proof.length > 2, true);
    const cases: [string, string, string | null, bigint, string[]][] = [
      ['balance + 1', did, payout, micros + 1n, proof],
      ['balance - 1', did, payout, micros - 1n, proof],
      ['another account', (set[7] as { did: string }).did, payout, micros, proof],
      ['another payout', did, '0x00000000000000000000000000000000000000ee', micros, proof],
      ['no payout', did, null, micros, proof],
      ['another root', did, payout, micros, proof],
      ['a sibling missing', did, payout, micros, proof.slice(1)],
      ['a sibling added', did, payout, micros, [...proof, tree.root]],
      ['siblings swapped', did, payout, micros, [proof[1] as string, proof[0] as string, ...proof.slice(2)]],
      ...proof.map((_, i): [string, string, string | null, bigint, string[]] => [
        `sibling ${i} flipped`,
        did,
        payout,
        micros,
        proof.map((p, j) => (i === j ? flip(p, i * 5) : p)),
      ]),
    ];
    for (const [name, caseDid, casePayout, caseMicros, caseProof] of cases) {
      const root = name === 'another root' ? flip(tree.root, 31) : tree.root;
      assert.equal(verifyBalanceProof(root, caseDid, casePayout, caseMicros, caseProof), false, name);
      const value: BalanceLeafValue = [balanceLeafTag, accountHash(caseDid), leafPayout(casePayout), caseMicros.toString()];
      assert.equal(StandardMerkleTree.verify(root, [...balanceLeafEncoding], value, caseProof), false, name);
    }
  });

  it('refuses malformed inputs to the hand-written verifier, and accepts an uppercase hex root', () => {
    const tree = buildBalanceTree(three);
    const proof = tree.proofFor(alice)?.proof ?? [];
    assert.equal(verifyBalanceProof(tree.root, alice, alicePayout, 1_500_000n, proof), true);
    assert.equal(verifyBalanceProof(`0x${tree.root.slice(2).toUpperCase()}`, alice, alicePayout, 1_500_000n, proof), true);
    assert.equal(verifyBalanceProof(tree.root.slice(2), alice, alicePayout, 1_500_000n, proof), false);
    assert.equal(
      verifyBalanceProof(
        tree.root,
        alice,
        alicePayout,
        1_500_000n,
        proof.map((p) => p.slice(2)),
      ),
      false,
    );
    assert.equal(verifyBalanceProof(tree.root, alice, alicePayout, 1_500_000n, [`${proof[0]}00`, ...proof.slice(1)]), false);
    assert.equal(verifyBalanceProof(tree.root, alice, alicePayout, -1n, proof), false);
    assert.equal(verifyBalanceProof(tree.root, alice, alicePayout, maxAmountMicros + 1n, proof), false);
    assert.equal(verifyBalanceProof(tree.root, alice, alicePayout, 1_500_000 as unknown as bigint, proof), false);
    assert.equal(verifyBalanceProof(tree.root, `${alice}\ud800`, alicePayout, 1_500_000n, proof), false);
    assert.equal(verifyBalanceProof(tree.root, alice, '0xa1', 1_500_000n, proof), false);
    assert.equal(verifyBalanceProof(tree.root, alice, alicePayout.toUpperCase().replace('0X', '0x'), 1_500_000n, proof), true);
  });
});

describe('balance tree: building', () => {
  it('gives the same root and the same dump for the same balances in any order', () => {
    const set = accounts(9);
    const reference = buildBalanceTree(set);
    for (const order of [[...set].reverse(), [...set.slice(4), ...set.slice(0, 4)], [set[3], set[8], set[0], set[5], set[1], set[7], set[2], set[6], set[4]]]) {
      const tree = buildBalanceTree(order as BalanceInput[]);
      assert.equal(tree.root, reference.root);
      assert.deepEqual(tree.dump(), reference.dump());
    }
    // The dump lists values by DID bytes: acct0, acct1, acct2, … (all ASCII here).
    assert.deepEqual(
      reference.dump().values.map((v) => v.value[1]),
      [...set].sort((a, b) => (a.did < b.did ? -1 : 1)).map((a) => accountHash(a.did)),
    );
  });

  it('proves a zero balance and the maximum balance', () => {
    const tree = buildBalanceTree(three);
    for (const { did, payout, micros } of [three[1], three[2]] as BalanceInput[]) {
      const proof = tree.proofFor(did);
      assert.equal(proof?.leaf.micros, micros);
      assert.equal(verifyBalanceProof(tree.root, did, payout, micros, proof?.proof ?? ['x']), true);
    }
  });

  it('refuses an empty set, duplicates (also in other letter cases), malformed DIDs, payouts and balances out of range', () => {
    assert.throws(() => buildBalanceTree([]), /at least one account/);
    assert.throws(() => buildBalanceTree([...three, { did: bob, payout: null, micros: 1n }]), /account listed twice/);
    assert.throws(() => buildBalanceTree([...three, { did: bob.replace('fedcba', 'FEDCBA'), payout: null, micros: 0n }]), /account listed twice/);
    assert.throws(() => buildBalanceTree([...three, { did: alice.replace('0190a1b2', '0190A1B2'), payout: null, micros: 0n }]), /account listed twice/);
    for (const did of ['did:platform:bob', 'did:web:bob:fedcba9876543210', 'did:platform:b\ud800:fedcba9876543210', 42]) {
      assert.throws(() => buildBalanceTree([{ did: did as string, payout: null, micros: 1n }]), /not a well-formed DID/, String(did));
    }
    assert.throws(() => buildBalanceTree([{ did: bob, payout: null, micros: maxAmountMicros + 1n }]), RangeError);
    assert.throws(() => buildBalanceTree([{ did: bob, payout: null, micros: -1n }]), RangeError);
    assert.throws(() => buildBalanceTree([{ did: bob, payout: null, micros: 5 as unknown as bigint }]), TypeError);
    assert.throws(() => buildBalanceTree([{ did: bob, payout: '0xb0', micros: 5n }]), /payout address/);
  });

  it('keeps DIDs whose non-UUID labels differ only in case apart: they are different owners', () => {
    const tree = buildBalanceTree([
      { did: 'did:platform:Alice-Bot:0123456789abcdef', payout: null, micros: 1n },
      { did: 'did:platform:alice-bot:0123456789abcdef', payout: null, micros: 2n },
    ]);
    assert.equal(tree.proofFor('did:platform:Alice-Bot:0123456789abcdef')?.leaf.micros, 1n);
    assert.equal(tree.proofFor('did:platform:alice-bot:0123456789abcdef')?.leaf.micros, 2n);
  });

  it('has no proof for an account not in the tree, another spelling of one that is, or an ill-formed string', () => {
    const tree = buildBalanceTree(three);
    assert.equal(tree.proofFor('did:platform:dave:0000000000000001'), undefined);
    assert.equal(tree.proofFor(bob.toUpperCase()), undefined);
    assert.equal(tree.proofFor('\ud800'), undefined);
  });
});

describe('balance tree: dump and load', () => {
  const tree = buildBalanceTree(accounts(5));
  const stored = (): Record<string, unknown> => JSON.parse(JSON.stringify(tree.dump()));

  it('round-trips through JSON with the same root and proofs, and the package loads it too', () => {
    const loaded = loadBalanceTree(stored());
    assert.equal(loaded.root, tree.root);
    assert.equal(loaded.size, 5);
    for (const { did } of accounts(5)) assert.deepEqual(loaded.proofFor(did), tree.proofFor(did));
    assert.equal(StandardMerkleTree.load(stored() as never).root, tree.root);
  });

  it('hands out a copy: changing a dump does not change the tree', () => {
    const dump = tree.dump();
    dump.tree[0] = flip(dump.tree[0] as string, 0);
    (dump.values[0] as { value: BalanceLeafValue }).value[3] = '1';
    assert.deepEqual(loadBalanceTree(stored()).root, tree.root);
    assert.notEqual(tree.dump().tree[0], dump.tree[0]);
  });

  it('refuses a dump that is not exactly what its values build', () => {
    type Dump = { format: string; leafEncoding: string[]; tree: string[]; values: { value: string[]; treeIndex: number }[] };
    const leaf = (d: Dump, i: number): string[] => (d.values[i] as { value: string[] }).value;
    const edits: [string, (d: Dump) => unknown, RegExp][] = [
      ['format', (d) => Object.assign(d, { format: 'simple-v1' }), /standard-v1/],
      ['encoding', (d) => Object.assign(d, { leafEncoding: ['bytes32', 'bytes32', 'uint256'] }), /leaf encoding/],
      ['no values', (d) => Object.assign(d, { values: [] }), /no leaf values/],
      ['balance', (d) => leaf(d, 1).splice(3, 1, '7'), /does not match/],
      ['balance above the maximum', (d) => leaf(d, 1).splice(3, 1, (maxAmountMicros + 1n).toString()), /out of range/],
      ['balance spelled 07', (d) => leaf(d, 1).splice(3, 1, '07'), /out of range/],
      ['payout', (d) => leaf(d, 1).splice(2, 1, '0x00000000000000000000000000000000000000cc'), /does not match/],
      ['payout in capitals', (d) => leaf(d, 0).splice(2, 1, `0x${(leaf(d, 0)[2] as string).slice(2).toUpperCase()}`), /payout address/],
      ['three fields', (d) => leaf(d, 1).splice(2, 1), /not \[tag, account, payout, balance\]/],
      ['tag', (d) => leaf(d, 1).splice(0, 1, flip(balanceLeafTag, 3)), /balance tag/],
      ['repeated account', (d) => leaf(d, 1).splice(1, 1, leaf(d, 0)[1] as string), /repeated/],
      ['node hash', (d) => d.tree.splice(1, 1, flip(d.tree[1] as string, 9)), /does not match/],
      ['tree index', (d) => Object.assign(d.values[0] as object, { treeIndex: 0 }), /does not match/],
      ['hidden leaf', (d) => d.values.pop(), /does not match/],
      ['extra member', (d) => Object.assign(d, { note: 'x' }), /does not match/],
    ];
    for (const [name, edit, reason] of edits) {
      const dump = stored() as unknown as Dump;
      edit(dump);
      assert.throws(() => loadBalanceTree(dump), reason, name);
    }
    assert.throws(() => loadBalanceTree(null), /standard-v1/);
  });
});
