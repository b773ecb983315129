import { type ChainNode, connectNode, fundOnDevelopmentNode } from '@platform/kit/chain/chain-node';
import { gasLimitFor } from '@platform/kit/chain/gas';
import { systemClock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import { type Address, BaseError, ContractFunctionRevertedError, getAddress, type Hex, type PrivateKeyAccount } from 'viem';
import { ensureDevelopmentRegistry, operatedByUs } from './dev-registry.ts';
import { registryAbi, serviceKey } from './registry-contract.ts';

/** What the chain recorded for one publish. */
export interface Registration {
  txHash: Hex;
  block: bigint;
  manifestHash: Hex;
}

export interface RegistryRecord {
  owner: Address;
  manifestHash: Hex;
  updatedAt: bigint;
}

/** A registration that did not happen; `retryable` when publishing again may succeed (a node down, a timeout). */
export class RegistryError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.retryable = retryable;
  }
}

export interface ServiceRegistryClient {
  /** The registry's address (deployed first in development when none is configured). */
  address(): Promise<Address>;
  /** Registers a listing and waits for the receipt; `onSent` learns the hash as soon as the node accepted it. */
  register(entry: { listingId: string; manifestHash: string; owner: string }, onSent?: (hash: Hex) => Promise<void>): Promise<Registration>;
  lookup(listingId: string): Promise<RegistryRecord>;
  /** Waits for a registration in flight; later calls are refused. */
  close(): Promise<void>;
}

export interface RegistryClientOptions {
  rpcUrl: string;
  registryAddress: string | null;
  dev: boolean;
  dataDir: string;
  signer: PrivateKeyAccount;
  logger: Logger;
  receiptTimeoutMs?: number;
}

/**
 * The marketplace's side of ServiceRegistry, through viem. Connects on first use (a marketplace that never
 * publishes never talks to the node). Registrations are sent one at a time, in order, so two publishes never race
 * for the signing key's nonce; a registration is idempotent on chain (same id, hash and owner), so a publish that
 * failed or was cut off is simply published again.
 */
export function createRegistryClient(options: RegistryClientOptions): ServiceRegistryClient {
  let connecting: Promise<{ chain: ChainNode; address: Address }> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  async function connect() {
    // Asked once (no waiting): a node that does not answer makes this publish fail as retryable.
    const chain = await connectNode({ url: options.rpcUrl, account: options.signer, timeoutMs: 0, clock: systemClock, logger: options.logger });
    if (options.registryAddress !== null) {
      if (options.dev) await fundOnDevelopmentNode(chain, options.logger);
      return { chain, address: getAddress(options.registryAddress) };
    }
    if (!options.dev) throw new RegistryError('MARKETPLACE_REGISTRY_ADDRESS is not set (only a development marketplace deploys its own registry)', false);
    return { chain, address: await ensureDevelopmentRegistry(chain, { dataDir: options.dataDir, logger: options.logger }) };
  }

  function connection() {
    connecting ??= connect().catch((error: unknown) => {
      connecting = undefined;
      throw error instanceof RegistryError
        ? error
        : new RegistryError(`the chain node at ${options.rpcUrl} cannot be reached: ${message(error)}`, true, { cause: error });
    });
    return connecting;
  }

  /**
   * The connection, checked to still have the registry: a call to an address without code "succeeds" on chain, so
   * a development node started afresh would otherwise swallow registrations. In development the registry is then
   * deployed again; elsewhere the address is wrong and publishing stops until the setting is fixed.
   */
  async function liveConnection() {
    const current = await connection();
    if (await operatedByUs(current.chain, current.address)) return current;
    connecting = undefined;
    if (!options.dev || options.registryAddress !== null)
      throw new RegistryError(`no ServiceRegistry operated by ${options.signer.address} at ${current.address} on chain ${current.chain.chainId}`, false);
    return connection();
  }

  async function send(entry: { listingId: string; manifestHash: string; owner: string }, onSent?: (hash: Hex) => Promise<void>): Promise<Registration> {
    const args = [serviceKey(entry.listingId), entry.manifestHash as Hex, getAddress(entry.owner)] as const;
    try {
      const { chain, address } = await liveConnection();
      // Simulated first: a revert (another owner, a lost operator right) is named instead of costing gas.
      const { request } = await chain.client.simulateContract({ address, abi: registryAbi, functionName: 'register', args, account: chain.account });
      const gas = gasLimitFor(await chain.client.estimateContractGas(request));
      const hash = await chain.wallet.writeContract({ ...request, gas });
      await onSent?.(hash);
      const receipt = await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: options.receiptTimeoutMs ?? 60_000 });
      if (receipt.status !== 'success') throw new RegistryError(`the registry transaction ${hash} reverted`, false);
      return { txHash: hash, block: receipt.blockNumber, manifestHash: args[1] };
    } catch (error) {
      if (error instanceof RegistryError) throw error;
      const revert = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
      if (revert instanceof ContractFunctionRevertedError)
        throw new RegistryError(`the registry refused the listing: ${revert.data?.errorName ?? revert.shortMessage}`, false, { cause: error });
      throw new RegistryError(`registering on chain failed: ${message(error)}`, true, { cause: error });
    }
  }

  return {
    address: async () => (await connection()).address,
    register(entry, onSent) {
      if (closed) return Promise.reject(new RegistryError('the marketplace is shutting down', true));
      // A transient failure (the node busy, a fee moved) is tried once more: registering is idempotent on chain
      // (the same id, hash and owner), so a second transaction after a first that did land changes nothing.
      const once = () => send(entry, onSent);
      const next = queue.then(() => once().catch((error: unknown) => (error instanceof RegistryError && error.retryable ? once() : Promise.reject(error))));
      queue = next.catch(() => undefined);
      return next;
    },
    async lookup(listingId) {
      const { chain, address } = await connection();
      const [owner, manifestHash, updatedAt] = await chain.client.readContract({
        address,
        abi: registryAbi,
        functionName: 'services',
        args: [serviceKey(listingId)],
      });
      return { owner: getAddress(owner), manifestHash, updatedAt };
    },
    async close() {
      closed = true;
      await queue;
    },
  };
}

const message = (error: unknown) => (error instanceof BaseError ? error.shortMessage : error instanceof Error ? error.message : String(error));
