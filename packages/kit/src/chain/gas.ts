/**
 * The gas limit to sign for a transaction whose `eth_estimateGas` answered `estimate`.
 *
 * An estimate is the least gas that succeeds against the state and block it was run on, and the block the transaction
 * lands in differs: a contract that stores `block.timestamp` pays 100 gas to rewrite an unchanged slot in the estimate
 * and 2,900 in a block one second later, so a transaction signed with the bare estimate runs out of gas and reverts
 * (measured on anvil: every update of a ServiceRegistry entry reverted when the second changed between estimate and
 * mining). A fifth more covers that and other storage-dependent costs; unused gas is not charged.
 */
export function gasLimitFor(estimate: bigint): bigint {
  return (estimate * 6n) / 5n;
}
