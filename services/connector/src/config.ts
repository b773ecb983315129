import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';
import { connectors } from './connectors/index.ts';
import { connectorLimits as limits } from './limits.ts';
import { clientSettingNames, type OAuthClientSettings, type OAuthSettings } from './oauth/settings.ts';
import { parseVaultKeys, vaultKeysSetting } from './vault/keyring.ts';

export interface ConnectorConfig extends BaseConfig {
  readonly transportToken: string;
  readonly agentAuthSecret: string;
  readonly dev: boolean;
  /** CONNECTOR_VAULT_KEYS as given (checked here; the keyring itself is built by `resolveKeyring`). Empty in development. */
  readonly vaultKeys: string;
  readonly resealIntervalMs: number;
  readonly resealBatch: number;
  /** Base URL of Google's REST APIs (Gmail v1 and Calendar v3 share it). */
  readonly googleApiUrl: string;
  /** Per provider call, from sending to the end of the answer. */
  readonly providerTimeoutMs: number;
  /** Public URL, OAuth clients (the secret among them: never logged), state TTL and refresh margin. */
  readonly oauth: OAuthSettings;
}

/** Used when CONNECTOR_AGENT_AUTH_SECRET is empty outside production: tokens then prove nothing. */
export const developmentSecret = 'platform-connector-development-secret-not-for-production';

/**
 * The connector service's settings, parsed once. In production (NODE_ENV=production, unless CONNECTOR_DEV=true)
 * the transport token, the principal-token secret and the vault keys are required; in development an empty
 * CONNECTOR_VAULT_KEYS means one key generated once into DATA_DIR.
 */
export function loadConfig(env: Env): ConnectorConfig {
  const base = readBaseConfig(env, { service: 'connector', defaultPort: 9094 });
  const dev = read.boolean(env, 'CONNECTOR_DEV', false);
  const production = read.string(env, 'NODE_ENV', '') === 'production' && !dev;
  const transportToken = read.string(env, 'PLATFORM_CONNECTOR_TOKEN', '');
  const agentAuthSecret = read.string(env, 'CONNECTOR_AGENT_AUTH_SECRET', '');
  const vaultKeys = read.string(env, vaultKeysSetting, '').trim();
  if (production && transportToken === '') throw new ConfigError('PLATFORM_CONNECTOR_TOKEN is required in production (or set CONNECTOR_DEV=true)');
  if (production && agentAuthSecret === '') throw new ConfigError('CONNECTOR_AGENT_AUTH_SECRET is required in production (or set CONNECTOR_DEV=true)');
  if (production && vaultKeys === '') throw new ConfigError(`${vaultKeysSetting} is required in production (or set CONNECTOR_DEV=true)`);
  // Parsed now so a bad setting stops the start with one line; the parsed keys are not kept in the frozen config.
  if (vaultKeys !== '') parseVaultKeys(vaultKeys);
  return Object.freeze({
    ...base,
    transportToken,
    agentAuthSecret,
    dev,
    vaultKeys,
    resealIntervalMs: read.duration(env, 'CONNECTOR_RESEAL_INTERVAL', limits.resealIntervalDefault, { min: 1_000, max: 86_400_000 }),
    resealBatch: read.integer(env, 'CONNECTOR_RESEAL_BATCH', limits.resealBatchDefault, { min: 1, max: limits.resealBatchMax }),
    googleApiUrl: read.url(env, 'CONNECTOR_GOOGLE_API_URL', 'https://www.googleapis.com', production ? ['https:'] : ['https:', 'http:']),
    providerTimeoutMs: read.duration(env, 'CONNECTOR_PROVIDER_TIMEOUT', limits.providerTimeoutDefault, { min: 100, max: 120_000 }),
    oauth: readOAuth(env, base.port, production),
  });
}

/**
 * CONNECTOR_PUBLIC_URL, the state TTL, the refresh margin, and for each provider the connectors name
 * (`CONNECTOR_GOOGLE_*`) its client id and secret (both or neither) and endpoint overrides. In production every URL
 * is https: the authorization code, the client secret and the tokens travel on them.
 */
function readOAuth(env: Env, port: number, production: boolean): OAuthSettings {
  const protocols = production ? ['https:'] : ['https:', 'http:'];
  if (production && !read.optionalString(env, 'CONNECTOR_PUBLIC_URL')) {
    throw new ConfigError('CONNECTOR_PUBLIC_URL is required in production (the https URL the provider sends browsers back to)');
  }
  const clients: Record<string, OAuthClientSettings> = {};
  for (const provider of new Set(connectors.map((connector) => connector.oauth.provider))) {
    const names = clientSettingNames(provider);
    const clientId = read.optionalString(env, names.clientId);
    const clientSecret = read.optionalString(env, names.clientSecret);
    if ((clientId === undefined) !== (clientSecret === undefined)) {
      throw new ConfigError(`${names.clientId} and ${names.clientSecret} are set together or not at all`);
    }
    const client: OAuthClientSettings = {};
    if (clientId !== undefined && clientSecret !== undefined) Object.assign(client, { clientId, clientSecret });
    for (const key of ['authorizeUrl', 'tokenUrl', 'revokeUrl'] as const) {
      const value = read.optionalString(env, names[key]);
      if (value !== undefined) client[key] = read.url(env, names[key], value, protocols);
    }
    clients[provider] = Object.freeze(client);
  }
  return Object.freeze({
    publicUrl: read.url(env, 'CONNECTOR_PUBLIC_URL', `http://127.0.0.1:${port}`, protocols),
    stateTtlMs: read.duration(env, 'CONNECTOR_STATE_TTL', limits.stateTtlDefault, { min: limits.stateTtlMinMs, max: limits.stateTtlMaxMs }),
    refreshMarginMs: read.duration(env, 'CONNECTOR_REFRESH_MARGIN', limits.refreshMarginDefault, { min: 0, max: limits.refreshMarginMaxMs }),
    clients: Object.freeze(clients),
  });
}
