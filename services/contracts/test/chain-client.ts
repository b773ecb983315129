import { type Address, createPublicClient, http, type PublicClient } from 'viem';

/** viem as an outside client of the test chain: what a user would see on the node, not what the engine says. */
export function chainClient(url: string): PublicClient {
  return createPublicClient({ transport: http(url) });
}

export async function nonceOf(client: PublicClient, address: Address): Promise<number> {
  return client.getTransactionCount({ address });
}
