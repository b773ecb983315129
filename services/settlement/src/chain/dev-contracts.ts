import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainNode } from '@platform/kit/chain/chain-node';
import type { Logger } from 'pino';
import { type Address, getAddress, type Hex } from 'viem';
import { contractArtifacts, tokenAbi, vaultAbi } from './vault-contracts.ts';

export interface DeployedContracts {
  vault: Address;
  token: Address;
  /** The block the vault was deployed in: the deposit watcher starts there. */
  fromBlock: bigint;
}

/**
 * Development: the token and vault this service deployed on the local node, remembered in
 * `DATA_DIR/chain-<chain id>.json`; deployed (from the sequencer's EVM key, which owns the token and is the vault's
 * sequencer) when the file is missing or names contracts the node does not have (a fresh node). A token address
 * from the settings is used instead of deploying one. Returns `reset: true` when an earlier deployment was replaced.
 */
export async function ensureDevelopmentContracts(
  node: ChainNode,
  options: { dataDir: string; tokenAddress: string | null; forceWithdrawDelaySeconds: number; logger: Logger },
): Promise<DeployedContracts & { reset: boolean }> {
  const file = join(options.dataDir, `chain-${node.chainId}.json`);
  const saved = readSaved(file);
  if (saved && (await stillThere(node, saved))) return { ...saved, reset: false };
  if (saved)
    options.logger.warn(
      { file, vault: saved.vault },
      'the development contracts remembered for this chain are not on the node (a fresh node?): deploying them again',
    );
  const artifacts = contractArtifacts().contracts;
  const token = options.tokenAddress
    ? getAddress(options.tokenAddress)
    : await deploy(node, { abi: tokenAbi, bytecode: artifacts.DevReserveToken.bytecode, args: [node.account.address] });
  const vault = await deploy(node, {
    abi: vaultAbi,
    bytecode: artifacts.SettlementVault.bytecode,
    args: [token, node.account.address, BigInt(options.forceWithdrawDelaySeconds)],
  });
  const deployed: DeployedContracts = { token, vault: vault, fromBlock: await node.blockNumber() };
  const temporary = `${file}.tmp`;
  writeFileSync(
    temporary,
    `${JSON.stringify({ token, vault, from_block: deployed.fromBlock.toString(), force_withdraw_delay: options.forceWithdrawDelaySeconds }, null, 2)}\n`,
  );
  renameSync(temporary, file);
  options.logger.info({ token, vault, chainId: node.chainId, file }, 'deployed the development reserve token and vault');
  return { ...deployed, reset: saved !== undefined };
}

function readSaved(file: string): DeployedContracts | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { token: string; vault: string; from_block: string };
    return { token: getAddress(parsed.token), vault: getAddress(parsed.vault), fromBlock: BigInt(parsed.from_block) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file} is not a record of deployed contracts: ${(error as Error).message}`);
  }
}

async function stillThere(node: ChainNode, saved: DeployedContracts): Promise<boolean> {
  const code = await node.client.getCode({ address: saved.vault });
  if (code === undefined || code === '0x') return false;
  const [sequencer, token] = await Promise.all([
    node.client.readContract({ address: saved.vault, abi: vaultAbi, functionName: 'sequencer' }),
    node.client.readContract({ address: saved.vault, abi: vaultAbi, functionName: 'token' }),
  ]);
  return getAddress(sequencer) === getAddress(node.account.address) && getAddress(token) === saved.token;
}

async function deploy(node: ChainNode, contract: { abi: typeof tokenAbi | typeof vaultAbi; bytecode: Hex; args: readonly unknown[] }): Promise<Address> {
  const hash = await node.wallet.deployContract({ abi: contract.abi, bytecode: contract.bytecode, args: contract.args } as never);
  const receipt = await node.client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deploying a development contract failed (${hash})`);
  return getAddress(receipt.contractAddress);
}
