import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { type LocalNode, startAnvil } from '@platform/kit/chain/anvil';
import { ConfigError } from '@platform/kit/config';
import type { Logger } from 'pino';
import { createPublicClient, type Hex, http } from 'viem';
import type { ChainSettings } from '../config.ts';

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The chain this data folder's deployments (and settlement's and the marketplace's, beside it) live on. */
export const chainMarkerFile = 'local-chain.json';

interface ChainIdentity {
  chainId: number;
  /**
   * Block 0's hash: a node restarted from its state file keeps it, a new node has a new one, but only to the second
   * (its timestamp; the rest is anvil's defaults).
   */
  genesisHash: Hex;
  /** On a node this engine started: random bytes it stored at {@link markerAddress}, which no other node holds. */
  marker?: Hex;
}

/** Where a node this engine starts keeps its marker (slot 0): an address nothing deploys to. */
const markerAddress = '0x000000000000000000000000000000000000c4a1';

/** The local chain could not be brought up: one line saying why (its `code` keeps `platform up`'s message to it). */
export class LocalChainError extends Error {
  override name = 'LocalChainError';
  readonly code = 'local_chain_unavailable';
}

/**
 * Makes sure the local development chain answers: a node already serving CONTRACTS_LOCAL_RPC_URL is used as it is;
 * otherwise, with CONTRACTS_LOCAL_NODE=anvil and a loopback URL, anvil is started there with its state kept in
 * DATA_DIR/anvil-state.json, and waited for until it answers (CONTRACTS_LOCAL_NODE_START_TIMEOUT_MS) or exits. When
 * the chain cannot be brought up, CONTRACTS_LOCAL_CHAIN_REQUIRED (set by `platform up`) fails the start with a
 * LocalChainError saying why; otherwise that is logged, not fatal: compile and test work without a chain.
 *
 * Whichever node it is, its identity (chain id, genesis hash) is recorded in DATA_DIR/local-chain.json the first time;
 * later, a node answering there that is another chain (someone else's node on the port: its remembered deployments are
 * not there) is refused with a ConfigError naming the setting, rather than used. A node this engine starts itself is
 * its own: when its state was lost (a new genesis), the record is replaced, and the services that deploy on it redeploy.
 * Returns the step that stops what was started, and the RPC URL when a node answers there.
 */
export async function ensureLocalChain(
  settings: ChainSettings,
  dataDir: string,
  logger: Logger,
): Promise<{ stop: () => Promise<void>; rpcUrl: string | undefined }> {
  const url = new URL(settings.localRpcUrl);
  // Nothing listening is refused at once; a node that listens gets the engine's RPC timeout to answer.
  const answered = await chainIdentity(settings.localRpcUrl, settings.rpcTimeoutMs).catch(() => undefined);
  if (answered !== undefined) {
    if (answered.chainId !== settings.localChainId)
      logger.warn(
        { url: settings.localRpcUrl, answered: answered.chainId, expected: settings.localChainId },
        'the local node serves another chain id; the local profile will refuse it',
      );
    const recorded = readIdentity(dataDir);
    if (recorded !== undefined && !sameChain(recorded, answered))
      throw new ConfigError(
        `CONTRACTS_LOCAL_RPC_URL: ${settings.localRpcUrl} is served by a node this platform did not start ` +
          `(chain ${answered.chainId}, genesis ${answered.genesisHash.slice(0, 10)}…; the deployments in ${dataDir} are on chain ` +
          `${recorded.chainId}, genesis ${recorded.genesisHash.slice(0, 10)}…): stop that node, or set CONTRACTS_LOCAL_RPC_URL to a free port ` +
          `(or remove ${join(dataDir, chainMarkerFile)} to start over on it)`,
      );
    if (recorded === undefined) {
      logger.info({ url: settings.localRpcUrl, genesis: answered.genesisHash }, 'using the local node already answering; recorded as this data’s chain');
      writeIdentity(dataDir, answered);
    }
    return { stop: async () => {}, rpcUrl: settings.localRpcUrl };
  }
  const unavailable = (reason: string, error?: unknown) => {
    if (settings.localChainRequired) throw new LocalChainError(`the local chain did not come up: ${reason}`, { cause: error });
    logger.error({ url: settings.localRpcUrl, err: error, reason }, 'the local chain is unavailable');
    return { stop: async () => {}, rpcUrl: undefined };
  };
  if (settings.localNode !== 'anvil' || !loopbackHosts.has(url.hostname))
    return unavailable(
      settings.localNode === 'anvil'
        ? `no node answers at ${settings.localRpcUrl}, and anvil is started only on a loopback address`
        : `no node answers at ${settings.localRpcUrl} (CONTRACTS_LOCAL_NODE=external starts none)`,
    );
  let node: LocalNode | undefined;
  try {
    node = await startAnvil({
      host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 80),
      chainId: settings.localChainId,
      stateFile: join(dataDir, 'anvil-state.json'),
      binary: settings.anvilPath,
      logger,
    });
    await untilAnswering(settings, node);
    logger.info({ url: node.url }, 'started anvil for the local chain');
    await recordOwnNode(settings, dataDir, logger);
    const started = node;
    return { stop: () => started.stop(), rpcUrl: settings.localRpcUrl };
  } catch (error) {
    // A node that answers nothing useful is stopped, never left running beside a platform that does not use it.
    await node?.stop();
    return unavailable(error instanceof Error ? error.message : String(error), error);
  }
}

/**
 * Waits for a node this engine just started to answer eth_chainId: "Listening" on its output comes before it serves
 * requests, and on a busy machine a first request can take seconds. Each attempt has the engine's RPC timeout; the
 * wait ends when it answers, at CONTRACTS_LOCAL_NODE_START_TIMEOUT_MS, or when the node exits.
 */
async function untilAnswering(settings: ChainSettings, node: LocalNode): Promise<void> {
  const deadline = Date.now() + settings.localNodeStartTimeoutMs;
  const stopWaiting = new AbortController();
  const exited = node.exited.then((how) => {
    throw new LocalChainError(`${how} before it answered at ${settings.localRpcUrl}`);
  });
  exited.catch(() => undefined);
  let pause = 50;
  let last: unknown;
  try {
    for (let remaining = settings.localNodeStartTimeoutMs; remaining > 0; remaining = deadline - Date.now()) {
      try {
        await Promise.race([rpc(settings.localRpcUrl, Math.min(settings.rpcTimeoutMs, remaining)).getChainId(), exited]);
        return;
      } catch (error) {
        if (error instanceof LocalChainError) throw error;
        last = error;
      }
      await Promise.race([delay(Math.min(pause, Math.max(deadline - Date.now(), 0)), undefined, { signal: stopWaiting.signal }), exited]);
      pause = Math.min(pause * 2, 1_000);
    }
  } finally {
    stopWaiting.abort();
  }
  const why = last instanceof Error ? `: ${last.message.split('\n')[0]}` : '';
  throw new LocalChainError(
    `anvil did not answer at ${settings.localRpcUrl} within ${settings.localNodeStartTimeoutMs / 1000} s (CONTRACTS_LOCAL_NODE_START_TIMEOUT_MS)${why}`,
  );
}

/** The recorded chain is the one answering: same chain id and genesis, and the same marker when one was recorded. */
function sameChain(recorded: ChainIdentity, answered: ChainIdentity): boolean {
  return recorded.chainId === answered.chainId && recorded.genesisHash === answered.genesisHash && (recorded.marker ?? answered.marker) === answered.marker;
}

/**
 * After starting anvil: the record names this node's chain, with a marker stored on it. The same chain (restarted from
 * its state file, which may predate the marker: it is written every 30 s) keeps its marker; a new one gets a new one.
 */
async function recordOwnNode(settings: ChainSettings, dataDir: string, logger: Logger): Promise<void> {
  const rpcUrl = settings.localRpcUrl;
  const started = await chainIdentity(rpcUrl, settings.rpcTimeoutMs);
  const recorded = readIdentity(dataDir);
  const same = recorded !== undefined && recorded.chainId === started.chainId && recorded.genesisHash === started.genesisHash;
  if (same && recorded.marker !== undefined && recorded.marker === started.marker) return;
  if (recorded !== undefined && !same)
    logger.warn(
      { was: recorded.genesisHash, now: started.genesisHash },
      'the local node started with a new chain (its state file was lost?): deployments on the old one are gone',
    );
  const marker = (same ? recorded.marker : undefined) ?? (`0x${randomBytes(32).toString('hex')}` as Hex);
  await rpc(rpcUrl, settings.rpcTimeoutMs).request({ method: 'anvil_setStorageAt' as never, params: [markerAddress, '0x0', marker] as never });
  writeIdentity(dataDir, { ...started, marker });
}

const rpc = (rpcUrl: string, timeoutMs: number) => createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });

/** The identity of the chain a node serves; rejects when it does not answer within `timeoutMs`. */
async function chainIdentity(rpcUrl: string, timeoutMs: number): Promise<ChainIdentity> {
  const client = rpc(rpcUrl, timeoutMs);
  const [chainId, genesis, marker] = await Promise.all([
    client.getChainId(),
    client.getBlock({ blockNumber: 0n }),
    client.getStorageAt({ address: markerAddress, slot: '0x0' }),
  ]);
  const stored = marker === undefined || /^0x0*$/.test(marker) ? {} : { marker };
  return { chainId, genesisHash: genesis.hash, ...stored };
}

function readIdentity(dataDir: string): ChainIdentity | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, chainMarkerFile), 'utf8')) as { chain_id?: unknown; genesis_hash?: unknown; marker?: unknown };
    if (typeof parsed.chain_id !== 'number' || typeof parsed.genesis_hash !== 'string') return undefined;
    return {
      chainId: parsed.chain_id,
      genesisHash: parsed.genesis_hash as Hex,
      ...(typeof parsed.marker === 'string' ? { marker: parsed.marker as Hex } : {}),
    };
  } catch {
    return undefined;
  }
}

function writeIdentity(dataDir: string, identity: ChainIdentity): void {
  const file = join(dataDir, chainMarkerFile);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ chain_id: identity.chainId, genesis_hash: identity.genesisHash, marker: identity.marker }, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}
