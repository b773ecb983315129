import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';

export interface CustodyPolicy {
  /** Largest value plus maximum fee one transaction may commit; a caller's spend_cap_wei can only lower it. */
  readonly spendCapWei: bigint;
  /** Largest total of those over any 24 hours, per wallet. */
  readonly dailyCapWei: bigint;
  /** Chain profile ids the wallet may sign for; `*` allows every registered profile. */
  readonly allowedChains: readonly string[] | '*';
}

export interface ChainSettings {
  readonly mainnetRpcUrl: string;
  readonly localRpcUrl: string;
  readonly localChainId: number;
  /** `anvil`: start anvil for the local chain when nothing answers there; `external`: never start one. */
  readonly localNode: 'anvil' | 'external';
  readonly anvilPath: string | undefined;
  /** How long a node this engine started may take to answer its first request (it may be slow on a busy machine). */
  readonly localNodeStartTimeoutMs: number;
  /** The start fails when the local chain cannot be brought up (`platform up`, whose settlement and marketplace live on it). */
  readonly localChainRequired: boolean;
  /** Wei a wallet receives from the local node's dev account when it has none. */
  readonly localFundingWei: bigint;
  readonly rpcTimeoutMs: number;
  readonly receiptTimeoutMs: number;
}

export interface ContractsConfig extends BaseConfig {
  readonly transportToken: string;
  readonly dev: boolean;
  /** 64 hex (AES-256 key) sealing wallet keys; empty in development means DATA_DIR/wallet.key. */
  readonly walletKeyHex: string;
  readonly chains: ChainSettings;
  readonly policy: CustodyPolicy;
  readonly compilerThreads: number;
  readonly compileTimeoutMs: number;
  readonly compileCacheEntries: number;
  readonly testTimeoutMs: number;
  readonly fuzzRuns: number;
}

const ether = 10n ** 18n;

function readWei(env: Env, name: string, fallback: bigint): bigint {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^(0|[1-9]\d{0,77})$/.test(raw)) throw new ConfigError(`${name} must be a whole number of wei (decimal digits), got "${raw}"`);
  return BigInt(raw);
}

function readAllowedChains(env: Env): readonly string[] | '*' {
  const raw = read.string(env, 'CONTRACTS_ALLOWED_CHAINS', 'local,primary-mainnet').trim();
  if (raw === '*') return '*';
  const ids = raw.split(',').map((id) => id.trim());
  if (ids.some((id) => !/^[a-z0-9][a-z0-9-]{0,63}$/.test(id)))
    throw new ConfigError(`CONTRACTS_ALLOWED_CHAINS must be * or a comma-separated list of chain profile ids, got "${raw}"`);
  return Object.freeze(ids);
}

/**
 * The engine's settings, parsed once. With NODE_ENV=production the bearer and the wallet key are required unless
 * CONTRACTS_DEV=true: an open engine would let anyone sign with every agent's wallet.
 */
export function loadConfig(env: Env): ContractsConfig {
  const base = readBaseConfig(env, { service: 'contracts', defaultPort: 9095 });
  const dev = read.boolean(env, 'CONTRACTS_DEV', false);
  const production = read.string(env, 'NODE_ENV', '') === 'production';
  const transportToken = read.string(env, 'PLATFORM_CONTRACT_TOKEN', '');
  const walletKeyHex = read.string(env, 'CONTRACTS_WALLET_KEY', '');
  if (production && !dev && transportToken === '') throw new ConfigError('PLATFORM_CONTRACT_TOKEN is required in production (or set CONTRACTS_DEV=true)');
  if (production && !dev && walletKeyHex === '') throw new ConfigError('CONTRACTS_WALLET_KEY is required in production (or set CONTRACTS_DEV=true)');
  if (walletKeyHex !== '' && !/^[0-9a-fA-F]{64}$/.test(walletKeyHex))
    throw new ConfigError('CONTRACTS_WALLET_KEY must be 64 hex characters (a 32-byte AES-256 key)');
  const localNode = read.string(env, 'CONTRACTS_LOCAL_NODE', 'anvil');
  if (localNode !== 'anvil' && localNode !== 'external') throw new ConfigError(`CONTRACTS_LOCAL_NODE must be anvil or external, got "${localNode}"`);
  return Object.freeze({
    ...base,
    transportToken,
    dev,
    walletKeyHex: walletKeyHex.toLowerCase(),
    chains: Object.freeze({
      mainnetRpcUrl: env.CONTRACTS_MAINNET_RPC_URL ? read.url(env, 'CONTRACTS_MAINNET_RPC_URL', '', ['http:', 'https:'], false) : '',
      localRpcUrl: read.url(env, 'CONTRACTS_LOCAL_RPC_URL', 'http://127.0.0.1:8545', ['http:', 'https:']),
      localChainId: read.integer(env, 'CONTRACTS_LOCAL_CHAIN_ID', 31337, { min: 1, max: 2 ** 53 - 1 }),
      localNode,
      anvilPath: read.optionalString(env, 'CONTRACTS_ANVIL_PATH'),
      localNodeStartTimeoutMs: read.integer(env, 'CONTRACTS_LOCAL_NODE_START_TIMEOUT_MS', 60_000, { min: 1_000, max: 600_000 }),
      localChainRequired: read.boolean(env, 'CONTRACTS_LOCAL_CHAIN_REQUIRED', false),
      localFundingWei: readWei(env, 'CONTRACTS_LOCAL_FUNDING_WEI', 100n * ether),
      rpcTimeoutMs: read.integer(env, 'CONTRACTS_RPC_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
      receiptTimeoutMs: read.integer(env, 'CONTRACTS_RECEIPT_TIMEOUT_MS', 60_000, { min: 1_000, max: 3_600_000 }),
    }),
    policy: Object.freeze({
      spendCapWei: readWei(env, 'CONTRACTS_SPEND_CAP_WEI', ether),
      dailyCapWei: readWei(env, 'CONTRACTS_DAILY_CAP_WEI', 10n * ether),
      allowedChains: readAllowedChains(env),
    }),
    compilerThreads: read.integer(env, 'CONTRACTS_COMPILER_THREADS', 1, { min: 1, max: 16 }),
    compileTimeoutMs: read.integer(env, 'CONTRACTS_COMPILE_TIMEOUT_MS', 120_000, { min: 1_000, max: 600_000 }),
    compileCacheEntries: read.integer(env, 'CONTRACTS_COMPILE_CACHE', 16, { min: 1, max: 256 }),
    testTimeoutMs: read.integer(env, 'CONTRACTS_TEST_TIMEOUT_MS', 120_000, { min: 1_000, max: 600_000 }),
    fuzzRuns: read.integer(env, 'CONTRACTS_FUZZ_RUNS', 256, { min: 1, max: 100_000 }),
  });
}
