import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChainNode, fundOnDevelopmentNode } from '@platform/kit/chain/chain-node';
import type { Logger } from 'pino';
import { type Address, getAddress } from 'viem';
import { registryAbi, registryArtifacts } from './registry-contract.ts';

/**
 * Development only: the registry this marketplace deployed on the local node, remembered in
 * `DATA_DIR/registry-<chain id>.json` and deployed again when the file is missing or names a contract the node does
 * not have (a fresh node) or one another key operates. The signing key is given gas first (anvil_setBalance), so a
 * fresh key works at once.
 */
export async function ensureDevelopmentRegistry(chain: ChainNode, options: { dataDir: string; logger: Logger }): Promise<Address> {
  const file = join(options.dataDir, `registry-${chain.chainId}.json`);
  const saved = readSaved(file);
  if (saved && (await operatedByUs(chain, saved))) return saved;
  if (saved) options.logger.warn({ file, registry: saved }, 'the remembered development registry is not on the node (a fresh node?): deploying it again');
  await fundOnDevelopmentNode(chain, options.logger);
  const hash = await chain.wallet.deployContract({
    abi: registryAbi,
    bytecode: registryArtifacts().contracts.ServiceRegistry.bytecode,
    args: [chain.account.address],
  });
  const receipt = await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deploying the development service registry failed (${hash})`);
  const address = getAddress(receipt.contractAddress);
  mkdirSync(options.dataDir, { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ registry: address, operator: chain.account.address, tx_hash: hash }, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  options.logger.info({ registry: address, chainId: chain.chainId, file }, 'deployed the development service registry');
  return address;
}

function readSaved(file: string): Address | undefined {
  try {
    return getAddress((JSON.parse(readFileSync(file, 'utf8')) as { registry: string }).registry);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file} is not a record of a deployed registry: ${(error as Error).message}`);
  }
}

export async function operatedByUs(chain: ChainNode, address: Address): Promise<boolean> {
  const code = await chain.client.getCode({ address });
  if (code === undefined || code === '0x') return false;
  const operator = await chain.client.readContract({ address, abi: registryAbi, functionName: 'operator' }).catch(() => undefined);
  return operator !== undefined && getAddress(operator) === getAddress(chain.account.address);
}
