import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';
import type { BucketRate } from '@platform/kit/http/rate-limit';

export interface MarketplaceConfig extends BaseConfig {
  readonly dev: boolean;
  /** Secret of caller principal tokens (the DID handshake) and developer tokens; empty: the development secret. */
  readonly agentAuthSecret: string;
  /** 64 hex secp256k1 key: signs EIP-712 quotes and receipts and sends registry transactions; empty: generated into DATA_DIR. */
  readonly signingKeyHex: string;
  /** 64 hex ed25519 seed of the marketplace's own DID at settlement (the escrow payee) and of voucher co-signatures. */
  readonly agentKeyHex: string;
  readonly settlementUrl: string;
  /** Settlement's optional LEDGER_TOKEN fleet gate. */
  readonly ledgerToken: string;
  /** The chain the service registry lives on; empty: listings are published without a registration. */
  readonly rpcUrl: string;
  readonly registryAddress: string | null;
  /** The domain SIWE messages must name (EIP-4361), e.g. `market.example.com`. */
  readonly siweDomain: string;
  /** The chain id in the EIP-712 domain of quotes and receipts (125, the platform's chain, by default). */
  readonly eip712ChainId: number;
  readonly quoteTtlSeconds: number;
  /** How long the terms of a 402 challenge stay valid. */
  readonly paymentTtlSeconds: number;
  /** The longest any provider call may take (a manifest's timeouts are capped by it). */
  readonly providerTimeoutMs: number;
  /** Provider endpoints on loopback or private addresses (development only). */
  readonly allowPrivateEndpoints: boolean;
  /** Per client address, the sign-in and handshake routes (each writes a nonce row): `<per second>/<burst>`. */
  readonly authRate: BucketRate;
  /** How often the sweep settles what an interruption left open (holds, tabs, payouts). */
  readonly sweepSeconds: number;
  readonly trustProxy: boolean;
  /** Where hosted Workers run: `workerd` on this machine, or `cloudflare` (Workers for Platforms). */
  readonly hostedRunner: 'workerd' | 'cloudflare';
  /** Workers for Platforms: the API base, account, dispatch namespace, API token, and the dispatch Worker calls go to. */
  readonly cloudflare: {
    readonly apiUrl: string;
    readonly accountId: string;
    readonly namespace: string;
    readonly apiToken: string;
    readonly dispatchUrl: string;
    readonly dispatchToken: string;
  };
}

/** Used when MARKETPLACE_AGENT_AUTH_SECRET is empty outside production: tokens then prove nothing. */
export const developmentSecret = 'platform-marketplace-development-secret-not-for-production';

const hex64 = /^[0-9a-fA-F]{64}$/;
const evmAddress = /^0x[0-9a-fA-F]{40}$/;

function key(env: Env, name: string): string {
  const raw = read.string(env, name, '').replace(/^0x/, '');
  if (raw !== '' && !hex64.test(raw)) throw new ConfigError(`${name} must be 64 hex characters`);
  return raw.toLowerCase();
}

/**
 * The marketplace's settings, parsed once. With NODE_ENV=production the auth secret and both keys are required
 * unless MARKETPLACE_DEV=true.
 */
export function loadConfig(env: Env): MarketplaceConfig {
  const base = readBaseConfig(env, { service: 'marketplace', defaultPort: 9098 });
  const dev = read.boolean(env, 'MARKETPLACE_DEV', false);
  const production = read.string(env, 'NODE_ENV', '') === 'production';
  const agentAuthSecret = read.string(env, 'MARKETPLACE_AGENT_AUTH_SECRET', '');
  const signingKeyHex = key(env, 'MARKETPLACE_SIGNING_KEY');
  const agentKeyHex = key(env, 'MARKETPLACE_AGENT_KEY');
  if (production && !dev) {
    for (const [name, value] of [
      ['MARKETPLACE_AGENT_AUTH_SECRET', agentAuthSecret],
      ['MARKETPLACE_SIGNING_KEY', signingKeyHex],
      ['MARKETPLACE_AGENT_KEY', agentKeyHex],
    ] as const)
      if (value === '') throw new ConfigError(`${name} is required in production (or set MARKETPLACE_DEV=true)`);
  }
  const registryAddress = read.string(env, 'MARKETPLACE_REGISTRY_ADDRESS', '');
  if (registryAddress !== '' && !evmAddress.test(registryAddress))
    throw new ConfigError('MARKETPLACE_REGISTRY_ADDRESS must be a 0x-prefixed 20-byte hex address');
  const hostedRunner = read.string(env, 'MARKETPLACE_HOSTED_RUNNER', 'workerd');
  if (hostedRunner !== 'workerd' && hostedRunner !== 'cloudflare')
    throw new ConfigError(`MARKETPLACE_HOSTED_RUNNER must be workerd or cloudflare, got "${hostedRunner}"`);
  const cloudflare = {
    apiUrl: read.url(env, 'MARKETPLACE_CLOUDFLARE_API_URL', 'https://api.cloudflare.com/client/v4', ['http:', 'https:']),
    accountId: read.string(env, 'MARKETPLACE_CLOUDFLARE_ACCOUNT_ID', ''),
    namespace: read.string(env, 'MARKETPLACE_CLOUDFLARE_NAMESPACE', ''),
    apiToken: read.string(env, 'MARKETPLACE_CLOUDFLARE_API_TOKEN', ''),
    dispatchUrl: read.string(env, 'MARKETPLACE_CLOUDFLARE_DISPATCH_URL', ''),
    dispatchToken: read.string(env, 'MARKETPLACE_CLOUDFLARE_DISPATCH_TOKEN', ''),
  };
  if (hostedRunner === 'cloudflare')
    for (const [name, value] of [
      ['MARKETPLACE_CLOUDFLARE_ACCOUNT_ID', cloudflare.accountId],
      ['MARKETPLACE_CLOUDFLARE_NAMESPACE', cloudflare.namespace],
      ['MARKETPLACE_CLOUDFLARE_API_TOKEN', cloudflare.apiToken],
      ['MARKETPLACE_CLOUDFLARE_DISPATCH_URL', cloudflare.dispatchUrl],
    ] as const)
      if (value === '') throw new ConfigError(`${name} is required with MARKETPLACE_HOSTED_RUNNER=cloudflare`);
  const rpcUrl = read.string(env, 'MARKETPLACE_RPC_URL', '');
  if (rpcUrl !== '' && !/^https?:\/\//.test(rpcUrl)) throw new ConfigError(`MARKETPLACE_RPC_URL must be an http(s) URL, got "${rpcUrl}"`);
  return Object.freeze({
    ...base,
    dev,
    agentAuthSecret,
    signingKeyHex,
    agentKeyHex,
    settlementUrl: read.url(env, 'MARKETPLACE_SETTLEMENT_URL', 'http://127.0.0.1:9097', ['http:', 'https:']),
    ledgerToken: read.string(env, 'MARKETPLACE_LEDGER_TOKEN', ''),
    rpcUrl,
    registryAddress: registryAddress === '' ? null : registryAddress,
    siweDomain: read.string(env, 'MARKETPLACE_SIWE_DOMAIN', `localhost:${base.port}`),
    eip712ChainId: read.integer(env, 'MARKETPLACE_EIP712_CHAIN_ID', 125, { min: 1, max: 2 ** 31 - 1 }),
    quoteTtlSeconds: read.integer(env, 'MARKETPLACE_QUOTE_TTL_SECONDS', 300, { min: 5, max: 86_400 }),
    paymentTtlSeconds: read.integer(env, 'MARKETPLACE_PAYMENT_TTL_SECONDS', 300, { min: 5, max: 3_600 }),
    providerTimeoutMs: read.integer(env, 'MARKETPLACE_PROVIDER_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }),
    allowPrivateEndpoints: read.boolean(env, 'MARKETPLACE_ALLOW_PRIVATE_ENDPOINTS', dev),
    authRate: read.bucketRate(env, 'MARKETPLACE_RATE_AUTH', { perSecond: 10, burst: 20 }),
    sweepSeconds: read.integer(env, 'MARKETPLACE_SWEEP_SECONDS', 30, { min: 1, max: 3_600 }),
    trustProxy: read.boolean(env, 'MARKETPLACE_TRUST_PROXY', false),
    hostedRunner,
    cloudflare: Object.freeze(cloudflare),
  });
}
