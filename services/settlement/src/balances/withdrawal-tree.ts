import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { keccak256 } from 'ethereum-cryptography/keccak';

/**
 * The withdrawal tree: at each window close, a Merkle tree over the withdrawals burned in that window, anchored
 * with the batch. The vault pays a withdrawal only against the anchored root of the batch that burned it, so a
 * burn the chain has not seen anchored can never be paid, and after a freeze the last anchored balance root and
 * the anchored withdrawals never pay one unit twice. OpenZeppelin's StandardMerkleTree, as the vault checks it:
 *
 *     leaf = keccak256(keccak256(abi.encode(bytes32 tag, bytes32 withdrawalId, address to, uint256 amount)))
 *     tag  = keccak256("platform.settlement.withdrawal.v1")
 *     withdrawalId = the withdrawal's UUID as a 16-byte number in a 32-byte word (zeros, then the UUID's hex)
 *
 * Withdrawals per window are few next to accounts, so the package builds it as it is.
 */

export const withdrawalLeafTag = `0x${Buffer.from(keccak256(Buffer.from('platform.settlement.withdrawal.v1', 'utf8'))).toString('hex')}`;
export const withdrawalLeafEncoding: readonly string[] = Object.freeze(['bytes32', 'bytes32', 'address', 'uint256']);

export type WithdrawalLeafValue = [tag: string, withdrawalId: string, to: string, amount: string];
export type WithdrawalTreeDump = ReturnType<StandardMerkleTree<WithdrawalLeafValue>['dump']>;

export interface WithdrawalInput {
  id: string;
  to: string;
  micros: bigint;
}

/** The withdrawal's id as the vault knows it: bytes32 of the UUID's 16 bytes, right-aligned. */
export function withdrawalKey(id: string): string {
  const hex = id.replaceAll('-', '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${JSON.stringify(id)}`);
  return `0x${hex.padStart(64, '0')}`;
}

/** The tree of one window's withdrawals, or undefined when it burned none (the anchor then carries a zero root). */
export function buildWithdrawalTree(withdrawals: readonly WithdrawalInput[]): { root: string; dump: WithdrawalTreeDump } | undefined {
  if (withdrawals.length === 0) return undefined;
  const values = [...withdrawals]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((withdrawal): WithdrawalLeafValue => [withdrawalLeafTag, withdrawalKey(withdrawal.id), withdrawal.to.toLowerCase(), withdrawal.micros.toString()]);
  const tree = StandardMerkleTree.of(values, [...withdrawalLeafEncoding]);
  return { root: tree.root, dump: tree.dump() };
}

export interface WithdrawalProof {
  withdrawal_id: string;
  to: string;
  amount: string;
  proof: string[];
}

/** The proof of one withdrawal in a stored tree (what `payout` takes), or undefined when it is not there. */
export function withdrawalProof(dump: unknown, id: string): WithdrawalProof | undefined {
  const tree = StandardMerkleTree.load(dump as WithdrawalTreeDump);
  const key = withdrawalKey(id);
  for (const [index, value] of tree.entries()) {
    if (value[1] !== key) continue;
    return { withdrawal_id: key, to: value[2], amount: value[3], proof: tree.getProof(index) };
  }
  return undefined;
}
