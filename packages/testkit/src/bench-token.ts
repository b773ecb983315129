import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Abi, createPublicClient, createWalletClient, defineChain, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ArtifactsFile } from './contract-engine.ts';

/*
 * The benches' EIP-3009 token (contracts/src/BenchAuthorizationToken.sol, compiled by the platform's contract engine
 * into contracts/artifacts.json) deployed on a local chain, for x402 to pay in: its EIP-712 domain is
 * ("Bench USD", "2"), 6 decimals like the ledger's micros, minted by its owner at will.
 */

const artifacts = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'contracts', 'artifacts.json'), 'utf8')) as ArtifactsFile;
const artifact = artifacts.contracts.BenchAuthorizationToken as { abi: Abi; bytecode: Hex };

/** What x402's payment requirements name in `extra`: the token's EIP-712 domain. */
export const benchTokenDomain = { name: 'Bench USD', version: '2' } as const;

export interface BenchToken {
  address: Hex;
  mint(to: Hex, amount: bigint): Promise<void>;
  balanceOf(owner: Hex): Promise<bigint>;
}

/**
 * Deploys the token with `ownerKey` (which needs gas on the chain) and waits for it.
 *
 * @example const token = await deployBenchToken(chain.url, 31337, ownerKey); await token.mint(payer, 1_000_000n);
 */
export async function deployBenchToken(rpcUrl: string, chainId: number, ownerKey: Hex): Promise<BenchToken> {
  const chain = defineChain({
    id: chainId,
    name: 'bench anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const account = privateKeyToAccount(ownerKey);
  const wallet = createWalletClient({ account, chain, transport: http(rpcUrl), pollingInterval: 50 });
  const reader = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 });
  const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: [account.address] });
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error('the bench token did not deploy');
  const address = receipt.contractAddress;
  return {
    address,
    async mint(to, amount) {
      const minted = await wallet.writeContract({ address, abi: artifact.abi, functionName: 'mint', args: [to, amount] });
      await reader.waitForTransactionReceipt({ hash: minted });
    },
    balanceOf: async (owner) => (await reader.readContract({ address, abi: artifact.abi, functionName: 'balanceOf', args: [owner] })) as bigint,
  };
}
