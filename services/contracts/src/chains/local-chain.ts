import { join } from 'node:path';
import { startAnvil } from '@platform/kit/chain/anvil';
import type { Logger } from 'pino';
import { createPublicClient, http } from 'viem';
import type { ChainSettings } from '../config.ts';

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Makes sure the local development chain answers: a node already serving CONTRACTS_LOCAL_RPC_URL is used as it is;
 * otherwise, with CONTRACTS_LOCAL_NODE=anvil and a loopback URL, anvil is started there with its state kept in
 * DATA_DIR/anvil-state.json. A failure is logged, not fatal: compile and test work without a chain.
 * Returns the step that stops what was started, and the RPC URL when a node answers there.
 */
export async function ensureLocalChain(
  settings: ChainSettings,
  dataDir: string,
  logger: Logger,
): Promise<{ stop: () => Promise<void>; rpcUrl: string | undefined }> {
  const url = new URL(settings.localRpcUrl);
  const client = createPublicClient({ transport: http(settings.localRpcUrl, { timeout: 1_000, retryCount: 0 }) });
  const answered = await client.getChainId().catch(() => undefined);
  if (answered !== undefined) {
    if (answered !== settings.localChainId)
      logger.warn(
        { url: settings.localRpcUrl, answered, expected: settings.localChainId },
        'the local node serves another chain id; the local profile will refuse it',
      );
    return { stop: async () => {}, rpcUrl: settings.localRpcUrl };
  }
  if (settings.localNode !== 'anvil' || !loopbackHosts.has(url.hostname)) {
    logger.warn({ url: settings.localRpcUrl }, 'no local node answers; the local chain is unavailable until one does');
    return { stop: async () => {}, rpcUrl: undefined };
  }
  try {
    const node = await startAnvil({
      host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 80),
      chainId: settings.localChainId,
      stateFile: join(dataDir, 'anvil-state.json'),
      binary: settings.anvilPath,
      logger,
    });
    logger.info({ url: node.url }, 'started anvil for the local chain');
    return { stop: () => node.stop(), rpcUrl: settings.localRpcUrl };
  } catch (error) {
    logger.error({ err: error }, 'could not start anvil; the local chain is unavailable');
    return { stop: async () => {}, rpcUrl: undefined };
  }
}
