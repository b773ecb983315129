import { getAddress } from 'viem';

/**
 * The text a payout address signs (EIP-191 `personal_sign`) to be bound to a DID on settlement: the address in its
 * EIP-55 spelling, the DID and the ledger's chain id, so a signature made for one DID or chain cannot bind another.
 * Settlement checks it; an agent (or `platform withdraw bind`) shows it to the address's owner to sign.
 *
 * @example payoutBindingMessage(did, '0xab5801a7d398351b8be11c439e05c5b3259aec9b', 31337)
 */
export function payoutBindingMessage(did: string, address: string, chainId: number): string {
  return `platform-settlement: bind payout address ${getAddress(address)} to ${did} on chain ${chainId}`;
}
