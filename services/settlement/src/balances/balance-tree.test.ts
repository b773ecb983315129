import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { maxAmountMicros } from '@platform/kit/money';
import { keccak256 } from 'ethereum-cryptography/keccak';
import {
  accountHash,
  type BalanceLeafValue,
  type BalanceTree,
  balanceLeafEncoding,
  balanceLeafHash,
  balanceLeafTag,
  buildBalanceTree,
  loadBalanceTree,
  newLeafMemo,
  verifyBalanceProof,
} from './balance-tree.ts';

const alice = 'did:platform:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:0123456789abcdef';
const bob = 'did:platform:bob:fedcba9876543210';
const carol = 'did:platform:carol:00112233aabbccdd';
const three = [
  { did: alice, micros: 1_500_000n },
  { did: bob, micros: 0n },
  { did: carol, micros: maxAmountMicros },
];

// Cross-checked once with an independent Keccak-256 written in Python from the FIPS 202 permutation
// (pad 0x01), sorted-pair nodes and the StandardMerkleTree layout.
const vector = {
  tag: '0xa64b2f575eb9323532aace3f12e96bb48df0cb13755e7b09bfc353e22b81dc41',
  aliceAccount: '0xb65b470e8c234eec28dc32fb62bb4e2ca5b3f0b866139f616a2ea8080c5b9bad',
  leaves: {
    alice: '0xaaf819e354872d4bb79a28029e346481fbf3a7e26a0a87aad7a5b26beedd84ac',
    bob: '0xc7b288bf7321930f544ffa3b489b1d7fe5ef2f5fb03d86dc8e8a954ad09f3e10',
    carol: '0x9d34499a061d3efc273eae45d48ded42cd6a8e15884d6f9107bd84393c7f8b25',
  },
  root: '0x1ce00433939f6e86e8d26208ecc667914f2720c31bd2017696893fb098de6108',
};

/** Accounts did:platform:acct<i>:<16 hex>, balances spread over the range, zero included. */
function accounts(n: number): { did: string; micros: bigint }[] {
  return Array.from({ length: n }, (_, i) => ({
    did: `did:platform:acct${i}:${(0x1000 + i).toString(16).padStart(16, '0')}`,
    micros: (BigInt(i) * 7_919_000_003n) % (maxAmountMicros + 1n),
  }));
}

const ozValue = (tree: BalanceTree, did: string): BalanceLeafValue => {
  const proof = tree.proofFor(did);
  assert.ok(proof, `no proof for ${did}`);
  return [proof.leaf.tag, proof.leaf.account, proof.leaf.micros.toString()];
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
    assert.deepEqual(balanceLeafEncoding, ['bytes32', 'bytes32', 'uint256']);
    assert.equal(accountHash(alice), vector.aliceAccount);
  });

  it('gives the literal leaf hashes and root for a fixed three-account set', () => {
    const tree = buildBalanceTree(three);
    assert.equal(tree.root, vector.root);
    assert.equal(tree.size, 3);
    assert.equal(balanceLeafHash(alice, 1_500_000n), vector.leaves.alice);
    assert.equal(balanceLeafHash(bob, 0n), vector.leaves.bob);
    assert.equal(balanceLeafHash(carol, maxAmountMicros), vector.leaves.carol);
    assert.equal(tree.proofFor(bob)?.leaf.hash, vector.leaves.bob);
  });

  it('writes the leaf as keccak256(keccak256(tag || keccak256(did) || uint256 balance)), 96 bytes of static words', () => {
    const word = (n: bigint): Buffer => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
    const encoded = Buffer.concat([Buffer.from(vector.tag.slice(2), 'hex'), Buffer.from(vector.aliceAccount.slice(2), 'hex'), word(1_500_000n)]);
    assert.equal(encoded.length, 96);
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
      for (const { did, micros } of set) {
        const proof = tree.proofFor(did);
        assert.ok(proof);
        const value = ozValue(tree, did);
        assert.deepEqual(value, [balanceLeafTag, accountHash(did), micros.toString()]);
        assert.equal(balanceLeafHash(did, micros), oz.leafHash(value));
        assert.equal(proof.leaf.hash, oz.leafHash(value));
        assert.deepEqual(proof.proof, oz.getProof(value));
        assert.equal(verifyBalanceProof(tree.root, did, micros, proof.proof), true, did);
        assert.equal(StandardMerkleTree.verify(tree.root, [...balanceLeafEncoding], value, proof.proof), true, did);
      }
    });
  }

  it('a one-account tree has the leaf hash as its root and an empty proof', () => {
    const tree = buildBalanceTree([{ did: bob, micros: 5n }]);
    assert.equal(tree.root, balanceLeafHash(bob, 5n));
    assert.deepEqual(tree.proofFor(bob)?.proof, []);
    assert.equal(verifyBalanceProof(tree.root, bob, 5n, []), true);
  });

  it('both verifiers refuse another balance, another account, another root and a damaged proof', () => {
    const set = accounts(13);
    const tree = buildBalanceTree(set);
    const { did, micros } = set[6] as { did: string; micros: bigint };
    const proof = tree.proofFor(did)?.proof ?? [];
    assert.equal(proof.length > 2, true);
    const cases: [string, string, bigint, string[]][] = [
      ['balance + 1', did, micros + 1n, proof],
      ['balance - 1', did, micros - 1n, proof],
      ['another account', (set[7] as { did: string }).did, micros, proof],
      ['another root', did, micros, proof],
      ['a sibling missing', did, micros, proof.slice(1)],
      ['a sibling added', did, micros, [...proof, tree.root]],
      ['siblings swapped', did, micros, [proof[1] as string, proof[0] as string, ...proof.slice(2)]],
      ...proof.map((_, i): [string, string, bigint, string[]] => [`sibling ${i} flipped`, did, micros, proof.map((p, j) => (i === j ? flip(p, i * 5) : p))]),
    ];
    for (const [name, caseDid, caseMicros, caseProof] of cases) {
      const root = name === 'another root' ? flip(tree.root, 31) : tree.root;
      assert.equal(verifyBalanceProof(root, caseDid, caseMicros, caseProof), false, name);
      const value: BalanceLeafValue = [balanceLeafTag, accountHash(caseDid), caseMicros.toString()];
      assert.equal(StandardMerkleTree.verify(root, [...balanceLeafEncoding], value, caseProof), false, name);
    }
  });

  it('refuses malformed inputs to the hand-written verifier, and accepts an uppercase hex root', () => {
    const tree = buildBalanceTree(three);
    const proof = tree.proofFor(alice)?.proof ?? [];
    assert.equal(verifyBalanceProof(tree.root, alice, 1_500_000n, proof), true);
    assert.equal(verifyBalanceProof(`0x${tree.root.slice(2).toUpperCase()}`, alice, 1_500_000n, proof), true);
    assert.equal(verifyBalanceProof(tree.root.slice(2), alice, 1_500_000n, proof), false);
    assert.equal(
      verifyBalanceProof(
        tree.root,
        alice,
        1_500_000n,
        proof.map((p) => p.slice(2)),
      ),
      false,
    );
    assert.equal(verifyBalanceProof(tree.root, alice, 1_500_000n, [`${proof[0]}00`, ...proof.slice(1)]), false);
    assert.equal(verifyBalanceProof(tree.root, alice, -1n, proof), false);
    assert.equal(verifyBalanceProof(tree.root, alice, maxAmountMicros + 1n, proof), false);
    assert.equal(verifyBalanceProof(tree.root, alice, 1_500_000 as unknown as bigint, proof), false);
    assert.equal(verifyBalanceProof(tree.root, `${alice}\ud800`, 1_500_000n, proof), false);
  });
});

describe('balance tree: building', () => {
  it('gives the same root and the same dump for the same balances in any order', () => {
    const set = accounts(9);
    const reference = buildBalanceTree(set);
    for (const order of [[...set].reverse(), [...set.slice(4), ...set.slice(0, 4)], [set[3], set[8], set[0], set[5], set[1], set[7], set[2], set[6], set[4]]]) {
      const tree = buildBalanceTree(order as { did: string; micros: bigint }[]);
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
    for (const { did, micros } of [three[1], three[2]] as { did: string; micros: bigint }[]) {
      const proof = tree.proofFor(did);
      assert.equal(proof?.leaf.micros, micros);
      assert.equal(verifyBalanceProof(tree.root, did, micros, proof?.proof ?? ['x']), true);
    }
  });

  it('refuses an empty set, duplicates (also in other letter cases), malformed DIDs and balances out of range', () => {
    assert.throws(() => buildBalanceTree([]), /at least one account/);
    assert.throws(() => buildBalanceTree([...three, { did: bob, micros: 1n }]), /account listed twice/);
    assert.throws(() => buildBalanceTree([...three, { did: bob.replace('fedcba', 'FEDCBA'), micros: 0n }]), /account listed twice/);
    assert.throws(() => buildBalanceTree([...three, { did: alice.replace('0190a1b2', '0190A1B2'), micros: 0n }]), /account listed twice/);
    for (const did of ['did:platform:bob', 'did:web:bob:fedcba9876543210', 'did:platform:b\ud800:fedcba9876543210', 42]) {
      assert.throws(() => buildBalanceTree([{ did: did as string, micros: 1n }]), /not a well-formed DID/, String(did));
    }
    assert.throws(() => buildBalanceTree([{ did: bob, micros: maxAmountMicros + 1n }]), RangeError);
    assert.throws(() => buildBalanceTree([{ did: bob, micros: -1n }]), RangeError);
    assert.throws(() => buildBalanceTree([{ did: bob, micros: 5 as unknown as bigint }]), TypeError);
  });

  it('keeps DIDs whose non-UUID labels differ only in case apart: they are different owners', () => {
    const tree = buildBalanceTree([
      { did: 'did:platform:Alice-Bot:0123456789abcdef', micros: 1n },
      { did: 'did:platform:alice-bot:0123456789abcdef', micros: 2n },
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
    (dump.values[0] as { value: BalanceLeafValue }).value[2] = '1';
    assert.deepEqual(loadBalanceTree(stored()).root, tree.root);
    assert.notEqual(tree.dump().tree[0], dump.tree[0]);
  });

  it('refuses a dump that is not exactly what its values build', () => {
    type Dump = { format: string; leafEncoding: string[]; tree: string[]; values: { value: string[]; treeIndex: number }[] };
    const leaf = (d: Dump, i: number): string[] => (d.values[i] as { value: string[] }).value;
    const edits: [string, (d: Dump) => unknown, RegExp][] = [
      ['format', (d) => Object.assign(d, { format: 'simple-v1' }), /standard-v1/],
      ['encoding', (d) => Object.assign(d, { leafEncoding: ['bytes32', 'bytes32', 'uint128'] }), /leaf encoding/],
      ['no values', (d) => Object.assign(d, { values: [] }), /no leaf values/],
      ['balance', (d) => leaf(d, 1).splice(2, 1, '7'), /does not match/],
      ['balance above the maximum', (d) => leaf(d, 1).splice(2, 1, (maxAmountMicros + 1n).toString()), /out of range/],
      ['balance spelled 07', (d) => leaf(d, 1).splice(2, 1, '07'), /out of range/],
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
