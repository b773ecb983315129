import type { Logger } from 'pino';
import {
  type Account,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PrivateKeyAccount,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import type { Clock } from '../clock.ts';

/** A node a service talks to, and the service's own EVM key on it (settlement's sequencer, the marketplace's signer). */
export interface ChainNode {
  url: string;
  chainId: number;
  chain: Chain;
  client: PublicClient<Transport, Chain>;
  wallet: WalletClient<Transport, Chain, Account>;
  account: Account & { address: Hex };
  /** Methods viem has no helper for (a development node's anvil_*). */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /**
   * The node's head, asked now. viem's getBlockNumber shares a request already in flight with later callers, which
   * can hand a caller the head from before its own transaction was mined.
   */
  blockNumber(): Promise<bigint>;
}

const ether = 10n ** 18n;

/**
 * Connects to the node at `url`, waiting up to `timeoutMs` for it to answer (under `platform up` the contract
 * engine may still be starting the development node; 0 asks once). The chain id is the node's; `expectedChainId`,
 * when given, must match it, so a service is never wired to another network by a stale URL.
 */
export async function connectNode(options: {
  url: string;
  account: PrivateKeyAccount;
  expectedChainId?: { id: number; setting: string } | undefined;
  timeoutMs: number;
  clock: Clock;
  logger: Logger;
}): Promise<ChainNode> {
  const transport = http(options.url, { timeout: 10_000, retryCount: 2 });
  const probe = createPublicClient({ transport: http(options.url, { timeout: 2_000, retryCount: 0 }) });
  const deadline = options.clock.now().getTime() + options.timeoutMs;
  let chainId: number | undefined;
  for (let attempt = 0; chainId === undefined; attempt++) {
    chainId = await probe.getChainId().catch(() => undefined);
    if (chainId !== undefined) break;
    if (options.clock.now().getTime() >= deadline) throw new Error(`the chain node at ${options.url} did not answer within ${options.timeoutMs} ms`);
    if (attempt === 0) options.logger.info({ url: options.url }, 'waiting for the chain node');
    await options.clock.sleep(250);
  }
  if (options.expectedChainId !== undefined && chainId !== options.expectedChainId.id)
    throw new Error(`the chain node at ${options.url} serves chain ${chainId}, but ${options.expectedChainId.setting} is ${options.expectedChainId.id}`);
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.url] } },
  });
  const { account } = options;
  let nextId = 1;
  const client = createPublicClient({ chain, transport });
  return {
    url: options.url,
    chainId,
    chain,
    client,
    blockNumber: async () => BigInt(await client.request({ method: 'eth_blockNumber' })),
    wallet: createWalletClient({ chain, transport, account }),
    account,
    async rpc<T>(method: string, params: unknown[] = []): Promise<T> {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json()) as { result?: T; error?: { message?: string } };
      if (body.error) throw new Error(`${method}: ${body.error.message ?? 'refused'}`);
      return body.result as T;
    },
  };
}

/**
 * Development only: gives the service's EVM address gas money on a local node (anvil's anvil_setBalance, or a
 * transfer from the node's first unlocked account on nodes without it), so a fresh key can send at once.
 */
export async function fundOnDevelopmentNode(node: ChainNode, logger: Logger): Promise<void> {
  const balance = await node.client.getBalance({ address: node.account.address });
  if (balance >= 10n * ether) return;
  try {
    await node.rpc('anvil_setBalance', [node.account.address, `0x${(1000n * ether).toString(16)}`]);
  } catch {
    const [funder] = await node.rpc<string[]>('eth_accounts');
    if (funder === undefined) throw new Error(`the development node has no unlocked account to fund ${node.account.address} from`);
    const hash = await node.rpc<Hex>('eth_sendTransaction', [{ from: funder, to: node.account.address, value: `0x${(100n * ether).toString(16)}` }]);
    await node.client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  }
  logger.info({ address: node.account.address }, 'funded the EVM address on the development node');
}
