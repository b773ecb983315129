import type { ChainNode } from '@platform/kit/chain/chain-node';
import { type Address, type ContractFunctionArgs, type ContractFunctionName, type ContractFunctionReturnType, type Hex, zeroHash } from 'viem';
import { vaultAbi } from './vault-contracts.ts';

type VaultRead = ContractFunctionName<typeof vaultAbi, 'view'>;

/** Reads the vault at the newest block deep enough to trust (its confirmations), or at a given block. */
export class VaultReader {
  readonly address: Address;
  readonly #node: ChainNode;
  readonly #confirmations: bigint;
  /** The block the vault was deployed in (or 0): logs are never looked for before it. */
  readonly fromBlock: bigint;

  constructor(node: ChainNode, address: Address, confirmations: number, fromBlock: bigint) {
    this.#node = node;
    this.address = address;
    this.#confirmations = BigInt(confirmations);
    this.fromBlock = fromBlock;
  }

  /** The newest block with `confirmations` blocks on it (its own included). */
  async safeBlock(): Promise<bigint> {
    const head = await this.#node.blockNumber();
    const safe = head - this.#confirmations + 1n;
    return safe < 0n ? 0n : safe;
  }

  latestBlock() {
    return this.#node.client.getBlock({ blockTag: 'latest' });
  }

  read<F extends VaultRead>(
    functionName: F,
    args: ContractFunctionArgs<typeof vaultAbi, 'view', F>,
    blockNumber?: bigint,
  ): Promise<ContractFunctionReturnType<typeof vaultAbi, 'view', F>> {
    return this.#node.client.readContract({
      address: this.address,
      abi: vaultAbi,
      functionName,
      args,
      ...(blockNumber === undefined ? {} : { blockNumber }),
    } as never) as Promise<ContractFunctionReturnType<typeof vaultAbi, 'view', F>>;
  }

  /** The transaction that emitted the vault's event matching `args`, with its block and gas. */
  async findEvent(
    eventName: 'Anchored' | 'WithdrawalPaid',
    args: Record<string, unknown>,
  ): Promise<{ hash: Hex; blockNumber: bigint; gasUsed: bigint | null } | undefined> {
    const logs = await this.#node.client.getContractEvents({
      address: this.address,
      abi: vaultAbi,
      eventName,
      args: args as never,
      fromBlock: this.fromBlock,
      toBlock: 'latest',
    });
    const log = logs.at(-1);
    if (!log?.transactionHash || log.blockNumber === null) return undefined;
    const receipt = await this.#node.client.getTransactionReceipt({ hash: log.transactionHash }).catch(() => undefined);
    return { hash: log.transactionHash, blockNumber: log.blockNumber, gasUsed: receipt?.gasUsed ?? null };
  }
}

export const emptyRoot = zeroHash;
