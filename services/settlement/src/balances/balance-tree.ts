import { isDeepStrictEqual } from 'node:util';
import type { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { parseDid } from '@platform/kit/auth/did';
import { maxAmountMicros } from '@platform/kit/money';
import { keccak256 } from 'ethereum-cryptography/keccak';

/**
 * The balance tree: at each window close, a Merkle tree over every account's balance, so the vault
 * contract can check a forced-withdrawal claim with OpenZeppelin's `MerkleProof` and a client with the
 * `@openzeppelin/merkle-tree` package. It is OpenZeppelin's StandardMerkleTree, unchanged:
 *
 *     leaf  = keccak256(keccak256(abi.encode(bytes32 tag, bytes32 account, address payout, uint256 balance)))
 *     tag     = keccak256("platform.settlement.balance.v2")
 *     account = keccak256(UTF-8 bytes of the DID)
 *     payout  = the account's bound payout address at the close (the zero address when none)
 *     balance = the account's balance in micros (10^-6 of the settlement unit), 0 … 10^15
 *     node  = keccak256(min(a, b) || max(a, b))   (sorted pairs; leaves sorted by hash)
 *
 * In Solidity: `keccak256(bytes.concat(keccak256(abi.encode(BALANCE_TAG, accountHash, payout, balance))))`,
 * then `MerkleProof.verify(proof, balanceRoot, leaf)`.
 *
 * Why this encoding: all four fields are static 32-byte words, so abi.encode is just their 128-byte
 * concatenation, which anyone can rebuild by hand; a `string` DID would add an offset word, a length
 * word and padding, and cost the contract more gas. The vault only needs to know accounts by hash.
 * The payout address is in the leaf because the vault's escape hatch pays a claim to the account's
 * bound address, and only the sequencer (which checked the binding's signature) can vouch for it:
 * with the address committed in the anchored root, anyone may submit a claim and only its owner is paid.
 * The tag makes a balance leaf differ from any other leaf of the same shape (a later claim or
 * withdrawal tree), so a proof from one kind of tree can never be replayed against the other's root.
 * The double hash is OpenZeppelin's: the outer keccak takes 32 bytes, a node's keccak takes 64, so an
 * interior node can never pass as a leaf. The chain id (125) and the vault address are not in the
 * leaf: a root means something only in the one vault contract that stores it.
 *
 * The root depends only on the set of (account, balance) pairs: the package sorts leaves by hash. The
 * input is also sorted by the DID's UTF-8 bytes before building, so the dump stored with a batch is
 * the same bytes for the same set, whatever order the ledger read its accounts in.
 */

export const balanceLeafTag = `0x${Buffer.from(keccak256(Buffer.from('platform.settlement.balance.v2', 'utf8'))).toString('hex')}`;
export const balanceLeafEncoding: readonly string[] = Object.freeze(['bytes32', 'bytes32', 'address', 'uint256']);
export const zeroAddress = '0x0000000000000000000000000000000000000000';

/** A leaf as the package holds it: [tag, account, payout (lowercase hex), balance in micros as a decimal string], so a dump is plain JSON. */
export type BalanceLeafValue = [tag: string, account: string, payout: string, balance: string];
/** The package's own dump (`format: 'standard-v1'`); `StandardMerkleTree.load` reads it as it is. */
export type BalanceTreeDump = ReturnType<StandardMerkleTree<BalanceLeafValue>['dump']>;

export interface BalanceLeaf {
  /** balanceLeafTag, 0x hex. */
  tag: string;
  /** keccak256 of the DID's UTF-8 bytes, 0x hex. */
  account: string;
  /** The bound payout address (lowercase), or the zero address. */
  payout: string;
  micros: bigint;
  /** The leaf hash that MerkleProof.verify takes, 0x hex. */
  hash: string;
}

/** One account at a window close: its DID, bound payout address (null for none) and balance + held in micros. */
export interface BalanceInput {
  did: string;
  payout: string | null;
  micros: bigint;
}

export interface BalanceProof {
  leaf: BalanceLeaf;
  /** Sibling hashes from the leaf up, 0x hex; empty when the tree has one account. */
  proof: string[];
}

export interface BalanceTree {
  /** 0x hex of the 32-byte root. */
  root: string;
  /** The number of accounts. */
  size: number;
  /** The proof for an account, or undefined when the DID has no leaf in this tree. */
  proofFor(did: string): BalanceProof | undefined;
  /** A copy of the tree as JSON-safe data, to store with its batch and read back with loadBalanceTree. */
  dump(): BalanceTreeDump;
}

const hex32 = /^0x[0-9a-fA-F]{64}$/;
const lowerAddress = /^0x[0-9a-f]{40}$/;
const lowerHex32 = /^0x[0-9a-f]{64}$/;
const decimal = /^(?:0|[1-9][0-9]*)$/;
const tagBytes = Buffer.from(balanceLeafTag.slice(2), 'hex');

const toHex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString('hex')}`;

/**
 * The account's key in the tree: keccak256 of the DID's UTF-8 bytes. Throws on a string that is not
 * well-formed UTF-16, which has no UTF-8 bytes of its own (a lone surrogate would encode as U+FFFD).
 *
 * @example accountHash('did:platform:alice:0123456789abcdef') // '0x…' (32 bytes)
 */
export function accountHash(did: string): string {
  if (typeof did !== 'string' || !did.isWellFormed()) throw new TypeError('a DID must be a well-formed string');
  return toHex(keccak256(Buffer.from(did, 'utf8')));
}

function memoAccountHash(did: string, memo: LeafMemo | undefined): string {
  const known = memo?.accounts.get(did);
  if (known) return known;
  const account = accountHash(did);
  memo?.accounts.set(did, account);
  return account;
}

/** abi.encode(uint256) of a non-negative bigint: 32 bytes big-endian. */
function uint256(value: bigint): Buffer {
  return Buffer.from(value.toString(16).padStart(64, '0'), 'hex');
}

/** abi.encode(address): the 20 bytes right-aligned in a 32-byte word. */
function addressWord(address: string): Buffer {
  return Buffer.from(address.slice(2).padStart(64, '0'), 'hex');
}

function leafHashBytes(account: Uint8Array, payout: string, micros: bigint): Uint8Array {
  return keccak256(keccak256(Buffer.concat([tagBytes, account, addressWord(payout), uint256(micros)])));
}

/** The payout address as the leaf holds it: lowercase hex, the zero address for none. Throws on anything else. */
function payoutOf(did: string, payout: string | null): string {
  if (payout === null) return zeroAddress;
  const lower = typeof payout === 'string' ? payout.toLowerCase() : '';
  if (!lowerAddress.test(lower)) throw new TypeError(`payout address of ${did} must be 0x and 40 hex, got ${JSON.stringify(payout)}`);
  return lower;
}

/**
 * The leaf hash of an account's balance, computed by hand (no OpenZeppelin code): the value the
 * contract rebuilds from a claim. Throws when micros is not a bigint in 0 … maxAmountMicros.
 *
 * @example balanceLeafHash('did:platform:alice:0123456789abcdef', null, 1_500_000n) // '0x…'
 */
export function balanceLeafHash(did: string, payout: string | null, micros: bigint): string {
  accountHash(did);
  checkMicros(did, micros);
  return toHex(leafHashBytes(keccak256(Buffer.from(did, 'utf8')), payoutOf(did, payout), micros));
}

function checkMicros(did: string, micros: bigint): void {
  if (typeof micros !== 'bigint') throw new TypeError(`balance of ${did} must be a bigint of micros`);
  if (micros < 0n || micros > maxAmountMicros) throw new RangeError(`balance of ${did} is outside 0 … ${maxAmountMicros} micros: ${micros}`);
}

/** One spelling per agent: the same owner and key fingerprint in other letter cases is the same account twice. */
function agentKey(did: string): string {
  const parsed = typeof did === 'string' && did.isWellFormed() ? parseDid(did) : undefined;
  if (!parsed) throw new Error(`not a well-formed DID: ${JSON.stringify(did)}`);
  return `${parsed.owner}:${parsed.keyFingerprint.toLowerCase()}`;
}

/**
 * OpenZeppelin's StandardMerkleTree, computed here: the package encodes every leaf through a general ABI
 * encoder and checks each step, about 0.3 ms per account (half a minute for 100,000 accounts), while our
 * leaves are four fixed words. Same algorithm, same output: leaves sorted by hash, stored from the end of
 * one array in that order, each node the keccak of its sorted children; `values` keep the input order with
 * their tree index. The tests hold the dump, root and proofs equal to the package's for random sets.
 */
function makeTree(values: readonly BalanceLeafValue[], memo?: LeafMemo): BalanceTreeDump {
  const hashed = values.map((value, valueIndex) => ({ valueIndex, hash: leafOf(value, memo) }));
  hashed.sort((a, b) => Buffer.compare(a.hash, b.hash));
  const nodes: Uint8Array[] = new Array(2 * hashed.length - 1);
  hashed.forEach((leaf, leafIndex) => {
    nodes[nodes.length - 1 - leafIndex] = leaf.hash;
  });
  for (let i = nodes.length - 1 - hashed.length; i >= 0; i--) {
    const left = nodes[2 * i + 1] as Uint8Array;
    const right = nodes[2 * i + 2] as Uint8Array;
    nodes[i] = keccak256(Buffer.compare(left, right) <= 0 ? Buffer.concat([left, right]) : Buffer.concat([right, left]));
  }
  const indexed = values.map((value) => ({ value, treeIndex: 0 }));
  hashed.forEach(({ valueIndex }, leafIndex) => {
    (indexed[valueIndex] as { treeIndex: number }).treeIndex = nodes.length - leafIndex - 1;
  });
  return { format: 'standard-v1', leafEncoding: [...balanceLeafEncoding], tree: nodes.map(toHex), values: indexed } as BalanceTreeDump;
}

/**
 * Hashes remembered between window closes (the crypto worker keeps one): an account's key hash never
 * changes and its leaf only when its balance or payout does, so a close rehashes only what moved, plus the nodes.
 */
export interface LeafMemo {
  /** DID → keccak256(DID). */
  accounts: Map<string, string>;
  /** Account hash → its last payout and balance, and their leaf hash. */
  leaves: Map<string, { payout: string; balance: string; leaf: Uint8Array }>;
}

export const newLeafMemo = (): LeafMemo => ({ accounts: new Map(), leaves: new Map() });

function leafOf(value: BalanceLeafValue, memo: LeafMemo | undefined): Uint8Array {
  const [, account, payout, balance] = value;
  const remembered = memo?.leaves.get(account);
  if (remembered && remembered.balance === balance && remembered.payout === payout) return remembered.leaf;
  const leaf = leafHashBytes(Buffer.from(account.slice(2), 'hex'), payout, BigInt(balance));
  memo?.leaves.set(account, { payout, balance, leaf });
  return leaf;
}

function wrap(dump: BalanceTreeDump): BalanceTree {
  const byAccount = new Map<string, { treeIndex: number; value: BalanceLeafValue }>();
  for (const { value, treeIndex } of dump.values) byAccount.set(value[1], { treeIndex, value });
  const nodes = dump.tree;
  return {
    root: nodes[0] as string,
    size: dump.values.length,
    proofFor(did: string): BalanceProof | undefined {
      if (typeof did !== 'string' || !did.isWellFormed()) return undefined;
      const found = byAccount.get(accountHash(did));
      if (!found) return undefined;
      const [tag, account, payout, balance] = found.value;
      const proof: string[] = [];
      // Sibling of i is i ± 1 (odd indexes are left children), parent ⌊(i − 1) / 2⌋, up to the root at 0.
      for (let index = found.treeIndex; index > 0; index = Math.floor((index - 1) / 2)) proof.push(nodes[index % 2 === 1 ? index + 1 : index - 1] as string);
      return { leaf: { tag, account, payout, micros: BigInt(balance), hash: nodes[found.treeIndex] as string }, proof };
    },
    dump: (): BalanceTreeDump => structuredClone(dump),
  };
}

/**
 * Builds the balance tree of one window close. Every account the ledger has goes in, zero balances
 * included (an account that spent everything must still be able to prove 0). Throws on an empty set
 * (the package cannot build one, and a batch with any receipt has at least one account), on a
 * malformed DID, on a balance that is not a bigint in 0 … maxAmountMicros, and on the same account
 * twice (also spelled in other letter cases): the ledger computes these, so each is a bug, not an
 * expected failure.
 *
 * @example
 * const tree = buildBalanceTree(accounts.map((a) => ({ did: a.did, payout: a.payout_address, micros: a.balance })));
 * batch.balanceRoot = tree.root; batch.balanceTree = tree.dump();
 */
export function buildBalanceTree(balances: ReadonlyArray<BalanceInput>, memo?: LeafMemo): BalanceTree {
  if (balances.length === 0) throw new Error('a balance tree needs at least one account');
  const seen = new Map<string, string>();
  for (const { did, micros } of balances) {
    const key = agentKey(did);
    checkMicros(did, micros);
    const earlier = seen.get(key);
    if (earlier !== undefined) throw new Error(`account listed twice: ${JSON.stringify(earlier)} and ${JSON.stringify(did)}`);
    seen.set(key, did);
  }
  const sorted = [...balances].sort((a, b) => Buffer.compare(Buffer.from(a.did, 'utf8'), Buffer.from(b.did, 'utf8')));
  const values = sorted.map(
    ({ did, payout, micros }): BalanceLeafValue => [balanceLeafTag, memoAccountHash(did, memo), payoutOf(did, payout), micros.toString()],
  );
  return wrap(makeTree(values, memo));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The leaf values of a dump, checked one by one, or the reason they are not ours. */
function dumpValues(dump: unknown): BalanceLeafValue[] | string {
  if (!isRecord(dump) || dump.format !== 'standard-v1') return 'not a standard-v1 tree dump';
  if (!isDeepStrictEqual(dump.leafEncoding, balanceLeafEncoding)) return 'leaf encoding is not bytes32, bytes32, address, uint256';
  if (!Array.isArray(dump.values) || dump.values.length === 0) return 'no leaf values';
  const values: BalanceLeafValue[] = [];
  const accounts = new Set<string>();
  for (const entry of dump.values as unknown[]) {
    const value = isRecord(entry) ? entry.value : undefined;
    if (!Array.isArray(value) || value.length !== 4) return 'a leaf value is not [tag, account, payout, balance]';
    const [tag, account, payout, balance] = value as unknown[];
    if (tag !== balanceLeafTag) return 'a leaf does not carry the balance tag';
    if (typeof account !== 'string' || !lowerHex32.test(account) || accounts.has(account)) return 'a leaf account is malformed or repeated';
    if (typeof payout !== 'string' || !lowerAddress.test(payout)) return 'a leaf payout address is malformed';
    if (typeof balance !== 'string' || !decimal.test(balance) || balance.length > 16 || BigInt(balance) > maxAmountMicros)
      return 'a leaf balance is out of range';
    accounts.add(account);
    values.push([tag, account, payout, balance]);
  }
  return values;
}

/**
 * Reads back a tree stored with a batch. The dump must be exactly what building its own leaf values
 * produces (same tree, same indexes), so a tampered hash, a hidden extra leaf or a foreign leaf kind
 * is refused. Throws on any mismatch: the dump comes from our own database, so a bad one is
 * corruption, not an expected input.
 *
 * @example const proof = loadBalanceTree(batch.balance_tree).proofFor(did)
 */
export function loadBalanceTree(dump: unknown): BalanceTree {
  const values = dumpValues(dump);
  if (typeof values === 'string') throw new Error(`not a balance tree dump: ${values}`);
  const rebuilt = makeTree(values);
  if (!isDeepStrictEqual(rebuilt, dump)) throw new Error('not a balance tree dump: its tree does not match its leaf values');
  return wrap(rebuilt);
}

/**
 * Verifies a balance proof the way the vault contract does (OpenZeppelin MerkleProof.verify), by hand
 * and without the package: rebuild the leaf from the DID and balance, fold in each sibling as a sorted
 * pair, compare with the root. False for anything malformed: a root or sibling that is not 0x plus 64
 * hex, an ill-formed DID, a payout that is not an address, or a balance that is not a bigint in 0 … maxAmountMicros.
 *
 * @example verifyBalanceProof(batch.balance_root, did, null, 1_500_000n, proof) // true
 */
export function verifyBalanceProof(root: string, did: string, payout: string | null, micros: bigint, proof: readonly string[]): boolean {
  if (typeof root !== 'string' || !hex32.test(root) || !Array.isArray(proof)) return false;
  if (!proof.every((sibling) => typeof sibling === 'string' && hex32.test(sibling))) return false;
  if (typeof did !== 'string' || !did.isWellFormed()) return false;
  if (typeof micros !== 'bigint' || micros < 0n || micros > maxAmountMicros) return false;
  if (payout !== null && (typeof payout !== 'string' || !lowerAddress.test(payout.toLowerCase()))) return false;
  let node = leafHashBytes(keccak256(Buffer.from(did, 'utf8')), payout === null ? zeroAddress : payout.toLowerCase(), micros);
  for (const sibling of proof) {
    const other = Buffer.from(sibling.slice(2), 'hex');
    // MerkleProof's commutative hash: the smaller 32-byte value goes first.
    node = keccak256(Buffer.compare(node, other) <= 0 ? Buffer.concat([node, other]) : Buffer.concat([other, node]));
  }
  return Buffer.compare(node, Buffer.from(root.slice(2), 'hex')) === 0;
}
