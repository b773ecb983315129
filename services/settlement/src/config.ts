import { availableParallelism } from 'node:os';
import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';
import type { BucketRate } from '@platform/kit/http/rate-limit';
import { parseAmount } from '@platform/kit/money';

export type RateSetting = BucketRate;

export interface SettlementConfig extends BaseConfig {
  /** Optional fleet gate on the principal (write) routes; empty leaves them open to any principal. */
  readonly transportToken: string;
  readonly agentAuthSecret: string;
  /** Bearer of the operator routes (deposit crediting); empty disables them. */
  readonly operatorToken: string;
  readonly dev: boolean;
  /** 64 hex seed of the sequencer's ed25519 key; empty in development means "generate once into DATA_DIR". */
  readonly sequencerKeyHex: string;
  readonly checkpointOrigin: string;
  readonly chainId: number;
  /** Whether SETTLEMENT_CHAIN_ID was given (with a node, it must then match the node's). */
  readonly chainIdSet: boolean;
  readonly chain: ChainSettings;
  readonly window: WindowSettings;
  readonly holdMaxSeconds: number;
  readonly takeoverPollMs: number;
  readonly maxGroup: number;
  /** Front threads doing the HTTP work of the movement routes; 0 serves everything from the sequencer's thread. */
  readonly httpThreads: number;
  readonly rates: { read: RateSetting; write: RateSetting; auth: RateSetting };
  readonly trustProxy: boolean;
}

/** The vault on a node; `rpcUrl` empty leaves the ledger recording what it would send. */
export interface ChainSettings {
  readonly rpcUrl: string;
  /** 64 hex secp256k1 key of the sequencer's EVM address; empty in development means "generate once into DATA_DIR". */
  readonly evmKeyHex: string;
  readonly vaultAddress: string | null;
  readonly tokenAddress: string | null;
  /** Where the deposit watcher starts reading a configured vault's events (its deployment block). */
  readonly vaultFromBlock: bigint;
  /** A deposit is credited once this many blocks hold it (its own block is the first). */
  readonly confirmations: number;
  readonly pollMs: number;
  /** A transaction not mined after this long is sent again with higher fees. */
  readonly feeBumpSeconds: number;
  readonly maxFeePerGasWei: bigint;
  /** The escape hatch's delay for vaults this service deploys in development. */
  readonly forceWithdrawDelaySeconds: number;
  /** How long start-up waits for the node. */
  readonly startTimeoutMs: number;
}

/** When a window closes into a batch: whichever comes first. */
export interface WindowSettings {
  /** A window with at least one receipt closes this many seconds after it opened. */
  readonly seconds: number;
  /** …or as soon as it holds this many receipts. */
  readonly maxReceipts: number;
  /** …or at once after a movement of at least this many micros. */
  readonly immediateMicros: bigint;
}

/** Used when SETTLEMENT_AGENT_AUTH_SECRET is empty outside production: tokens then prove nothing. */
/**
 * Front threads by default: none on a machine of two cores or fewer, where they would compete with the sequencer and
 * PostgreSQL for the same cores and the messages between threads cost more than they free (the README's benchmark);
 * one per core beyond two otherwise, at most four.
 */
const defaultHttpThreads = Math.max(0, Math.min(4, availableParallelism() - 2));

export const developmentSecret = 'platform-settlement-development-secret-not-for-production';

const evmAddress = /^0x[0-9a-fA-F]{40}$/;

function address(env: Env, name: string): string | null {
  const raw = read.optionalString(env, name);
  if (raw === undefined) return null;
  if (!evmAddress.test(raw)) throw new ConfigError(`${name} must be a 0x-prefixed 20-byte hex address, got "${raw}"`);
  return raw;
}

function amountSetting(env: Env, name: string, fallback: string): bigint {
  const raw = read.string(env, name, fallback);
  const parsed = parseAmount(raw);
  if (!parsed.ok) throw new ConfigError(`${name} must be a decimal amount such as 10000.000000, got "${raw}"`);
  return parsed.micros;
}

/**
 * The settlement service's settings, parsed once. With NODE_ENV=production the principal-token secret and
 * the sequencer key are required unless SETTLEMENT_DEV=true.
 */
export function loadConfig(env: Env): SettlementConfig {
  const base = readBaseConfig(env, { service: 'settlement', defaultPort: 9097 });
  const dev = read.boolean(env, 'SETTLEMENT_DEV', false);
  const production = read.string(env, 'NODE_ENV', '') === 'production';
  const agentAuthSecret = read.string(env, 'SETTLEMENT_AGENT_AUTH_SECRET', '');
  const sequencerKeyHex = read.string(env, 'SETTLEMENT_SEQUENCER_KEY', '');
  if (sequencerKeyHex !== '' && !/^[0-9a-fA-F]{64}$/.test(sequencerKeyHex))
    throw new ConfigError('SETTLEMENT_SEQUENCER_KEY must be 64 hex characters (an ed25519 seed)');
  if (production && !dev && agentAuthSecret === '')
    throw new ConfigError('SETTLEMENT_AGENT_AUTH_SECRET is required in production (or set SETTLEMENT_DEV=true)');
  if (production && !dev && sequencerKeyHex === '') throw new ConfigError('SETTLEMENT_SEQUENCER_KEY is required in production (or set SETTLEMENT_DEV=true)');
  const origin = read.string(env, 'SETTLEMENT_CHECKPOINT_ORIGIN', 'platform.settlement/log');
  if (!/^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/.test(origin) || origin.includes('+'))
    throw new ConfigError('SETTLEMENT_CHECKPOINT_ORIGIN must be printable ASCII without "+"');
  const rpcUrl = read.string(env, 'SETTLEMENT_RPC_URL', '');
  if (rpcUrl !== '' && !/^https?:\/\//.test(rpcUrl)) throw new ConfigError(`SETTLEMENT_RPC_URL must be an http(s) URL, got "${rpcUrl}"`);
  const evmKeyHex = read.string(env, 'SETTLEMENT_EVM_KEY', '').replace(/^0x/, '');
  if (evmKeyHex !== '' && !/^[0-9a-fA-F]{64}$/.test(evmKeyHex)) throw new ConfigError('SETTLEMENT_EVM_KEY must be 64 hex characters (a secp256k1 private key)');
  const vaultAddress = address(env, 'SETTLEMENT_VAULT_ADDRESS');
  if (rpcUrl !== '' && production && !dev && (evmKeyHex === '' || vaultAddress === null))
    throw new ConfigError('with SETTLEMENT_RPC_URL in production, SETTLEMENT_EVM_KEY and SETTLEMENT_VAULT_ADDRESS are required (or set SETTLEMENT_DEV=true)');
  if (read.optionalString(env, 'SETTLEMENT_ANCHOR_ADDRESS') !== undefined)
    throw new ConfigError('SETTLEMENT_ANCHOR_ADDRESS is gone: the vault stores the anchors; set SETTLEMENT_VAULT_ADDRESS');
  const chainIdSet = read.optionalString(env, 'SETTLEMENT_CHAIN_ID') !== undefined;
  return Object.freeze({
    ...base,
    transportToken: read.string(env, 'LEDGER_TOKEN', ''),
    agentAuthSecret,
    operatorToken: read.string(env, 'SETTLEMENT_OPERATOR_TOKEN', ''),
    dev,
    sequencerKeyHex: sequencerKeyHex.toLowerCase(),
    checkpointOrigin: origin,
    chainId: read.integer(env, 'SETTLEMENT_CHAIN_ID', 125, { min: 1, max: 2 ** 31 - 1 }),
    chainIdSet,
    chain: Object.freeze({
      rpcUrl,
      evmKeyHex: evmKeyHex.toLowerCase(),
      vaultAddress,
      tokenAddress: address(env, 'SETTLEMENT_TOKEN_ADDRESS'),
      vaultFromBlock: BigInt(read.integer(env, 'SETTLEMENT_VAULT_FROM_BLOCK', 0, { min: 0, max: Number.MAX_SAFE_INTEGER })),
      // On a development node blocks come only with transactions, so a deposit's own block must do.
      confirmations: read.integer(env, 'SETTLEMENT_CONFIRMATIONS', dev ? 1 : 6, { min: 1, max: 1_000 }),
      pollMs: read.integer(env, 'SETTLEMENT_CHAIN_POLL_MS', 1_000, { min: 10, max: 600_000 }),
      feeBumpSeconds: read.integer(env, 'SETTLEMENT_FEE_BUMP_SECONDS', 60, { min: 1, max: 86_400 }),
      maxFeePerGasWei: BigInt(read.integer(env, 'SETTLEMENT_MAX_FEE_GWEI', 500, { min: 1, max: 1_000_000 })) * 10n ** 9n,
      forceWithdrawDelaySeconds: read.integer(env, 'SETTLEMENT_FORCE_WITHDRAW_DELAY', 7 * 86_400, { min: 1, max: 365 * 86_400 }),
      startTimeoutMs: read.integer(env, 'SETTLEMENT_CHAIN_START_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }),
    }),
    window: Object.freeze({
      seconds: read.integer(env, 'SETTLEMENT_WINDOW_SECONDS', 60, { min: 1, max: 86_400 }),
      maxReceipts: read.integer(env, 'SETTLEMENT_WINDOW_MAX_RECEIPTS', 10_000, { min: 1, max: 1_000_000 }),
      immediateMicros: amountSetting(env, 'SETTLEMENT_WINDOW_IMMEDIATE_AMOUNT', '10000'),
    }),
    holdMaxSeconds: read.integer(env, 'SETTLEMENT_HOLD_MAX_SECONDS', 30 * 86_400, { min: 60, max: 365 * 86_400 }),
    takeoverPollMs: read.integer(env, 'SETTLEMENT_TAKEOVER_POLL_MS', 1_000, { min: 50, max: 60_000 }),
    maxGroup: read.integer(env, 'SETTLEMENT_MAX_GROUP', 512, { min: 1, max: 10_000 }),
    // SO_REUSEPORT spreads connections over the threads on Linux only; elsewhere one thread serves, as before.
    httpThreads: read.integer(env, 'SETTLEMENT_HTTP_THREADS', process.platform === 'linux' ? defaultHttpThreads : 0, { min: 0, max: 64 }),
    rates: {
      read: read.bucketRate(env, 'SETTLEMENT_RATE_READ', { perSecond: 200, burst: 400 }),
      write: read.bucketRate(env, 'SETTLEMENT_RATE_WRITE', { perSecond: 100, burst: 200 }),
      auth: read.bucketRate(env, 'SETTLEMENT_RATE_AUTH', { perSecond: 10, burst: 20 }),
    },
    trustProxy: read.boolean(env, 'SETTLEMENT_TRUST_PROXY', false),
  });
}
