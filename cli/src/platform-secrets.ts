import { hkdfSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { daemonTokenFor } from '@platform/kit/auth/daemon-token';
import { daemonOwnerTokenMinter, daemonOwnerTokens } from '@platform/kit/auth/owner-token';
import { ConfigError, type Env } from '@platform/kit/config';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import { userIdFromSettingOrFile } from '@platform/kit/user-id-file';

/**
 * `platform up` is secure by default: one root secret (PLATFORM_SECRET, or 32 random bytes generated once into
 * DATA_DIR/platform.secret) from which every shared secret of the platform is derived with HKDF-SHA256 under a label
 * of its own, and handed to exactly the services that use it. Nothing is left open, nothing runs on a built-in
 * development secret, and a restart derives the same values (sessions and sealed data survive it). A setting given
 * in the environment always wins over its derived value.
 */
export interface DerivedSetting {
  setting: string;
  /** The HKDF info: two settings share a value exactly when they share a label (a transport token and its callers). */
  label: string;
  /** The services that receive it. */
  services: readonly string[];
}

const callers = ['daemon', 'router'];

export const derivedSettings: readonly DerivedSetting[] = [
  // The root of the scheduler's owner tokens (with it, alarms that wake any user's daemon): the scheduler and the
  // router, which mints each daemon's; the daemon `up` runs gets its user's (daemonUserSecrets).
  { setting: 'SCHEDULER_TOKEN', label: 'scheduler/transport', services: ['scheduler', 'router'] },
  { setting: 'SCHEDULER_AGENT_AUTH_SECRET', label: 'scheduler/principal', services: ['scheduler'] },
  { setting: 'SCHEDULER_WAKE_TOKEN', label: 'router/wake', services: ['scheduler'] },
  { setting: 'ROUTER_WAKE_TOKEN', label: 'router/wake', services: ['router'] },
  { setting: 'LEDGER_TOKEN', label: 'settlement/transport', services: ['settlement', ...callers] },
  { setting: 'MARKETPLACE_LEDGER_TOKEN', label: 'settlement/transport', services: ['marketplace'] },
  { setting: 'SETTLEMENT_AGENT_AUTH_SECRET', label: 'settlement/principal', services: ['settlement'] },
  { setting: 'MARKETPLACE_AGENT_AUTH_SECRET', label: 'marketplace/principal', services: ['marketplace'] },
  // The gateway's root (spends and reads any actor's budget): the gateway, and the router, which mints each daemon's
  // token from it and meters its own /gw proxy with it; the daemon `up` runs gets its user's (daemonUserSecrets).
  { setting: 'PLATFORM_GATEWAY_TOKEN', label: 'gateway/transport', services: ['gateway', 'router'] },
  // The root of the memory server's owner tokens: the router mints each daemon's from it, and no daemon gets it
  // (it would read every user's memories); the daemon `up` runs itself gets its own user's (daemonUserSecrets).
  { setting: 'MEMORY_MCP_TOKEN', label: 'memory/transport', services: ['memory', 'router'] },
  // The root of the contract engine's owner tokens: with it a daemon could sign with any user's wallet, so only the
  // engine and the router (which mints each daemon's) get it; the daemon `up` runs gets its user's (daemonUserSecrets).
  { setting: 'PLATFORM_CONTRACT_TOKEN', label: 'contracts/transport', services: ['contracts', 'router'] },
  // The root of the connector's owner tokens (with it, any user's Google connection): the connector and the router
  // only. A daemon's stdio proxy child gets its user's token through the daemon (DAEMON_MCP_SERVERS env_pass).
  { setting: 'PLATFORM_CONNECTOR_TOKEN', label: 'connector/transport', services: ['connector', 'router'] },
  { setting: 'CONNECTOR_AGENT_AUTH_SECRET', label: 'connector/principal', services: ['connector'] },
  // The development identity provider's confidential client (`platform token` derives it too) and its cookie keys.
  { setting: 'IDENTITY_CLIENT_SECRET', label: 'identity/client', services: ['identity'] },
  { setting: 'IDENTITY_COOKIE_KEY', label: 'identity/cookies', services: ['identity'] },
  // The root of every daemon's bearer (with it, any user's daemon): the router only. The daemon `up` runs itself gets
  // its user's bearer derived from it as the router derives one (daemonUserSecrets), and so does `platform secret`.
  { setting: 'PLATFORM_DAEMON_TOKEN', label: 'daemon/bearer', services: ['router'] },
  // Mounts the router's admin routes (internal listener); `up` uses it too, to give the development user an invite.
  { setting: 'ROUTER_ADMIN_TOKEN', label: 'router/admin', services: ['router'] },
  // The bearer of every service's `GET /metrics` (kit observability): one value, so one Prometheus job secret scrapes
  // them all; it reads operational numbers only, never a user's data.
  {
    setting: 'PLATFORM_METRICS_TOKEN',
    label: 'metrics/bearer',
    services: ['scheduler', 'contracts', 'settlement', 'marketplace', 'gateway', 'memory', 'connector', 'daemon', 'router'],
  },
];

/**
 * The root secret's bytes and where they came from (safe to print: a setting's name or a file's path). `create:
 * false` reads an existing root only (a reader must not mint a root the running platform does not use).
 */
export function rootSecret(env: Env, options: { create?: boolean } = {}): { key: Buffer; source: string } {
  const configured = env.PLATFORM_SECRET ?? '';
  if (configured !== '') {
    if (configured.length < 32) throw new ConfigError('PLATFORM_SECRET must be at least 32 characters (it is the root of every platform secret)');
    return { key: Buffer.from(configured, 'utf8'), source: 'PLATFORM_SECRET' };
  }
  const path = join(platformDataDir(env), 'platform.secret');
  if (options.create === false && !existsSync(path))
    throw new ConfigError(`no root secret: ${path} does not exist and PLATFORM_SECRET is not set (run platform up with this DATA_DIR first)`);
  const file = secretFromSettingOrFile('', platformDataDir(env), 'platform.secret', 'PLATFORM_SECRET');
  return { key: Buffer.from(file.hex, 'hex'), source: file.source };
}

/** The parent of every service's folder under `up`. */
export function platformDataDir(env: Env): string {
  return env.DATA_DIR || '.data';
}

/** One service's folder under `up`: `<SERVICE>_DATA_DIR`, else `<DATA_DIR>/<service>`. */
export function serviceDataDir(env: Env, service: string): string {
  return env[`${service.toUpperCase()}_DATA_DIR`] || join(platformDataDir(env), service);
}

/** One derived secret: 32 bytes of HKDF-SHA256 under `label`, base64url. */
export function deriveSecret(root: Buffer, label: string): string {
  return deriveKey(root, label).toString('base64url');
}

/** 32 bytes of HKDF-SHA256 of the root under `platform/<label>`: every derived secret starts here. */
function deriveKey(root: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', root, 'platform up', `platform/${label}`, 32));
}

/** The derived settings `service` receives, leaving out any the environment sets itself. */
export function secretsFor(service: string, root: Buffer, env: Env, serviceDataDir: string): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const { setting, label, services } of derivedSettings) if (services.includes(service) && !env[setting]) secrets[setting] = deriveSecret(root, label);
  // The contract engine seals its wallets with this key. A folder from before derived keys keeps its own key file.
  if (service === 'contracts' && !env.CONTRACTS_WALLET_KEY && !existsSync(join(serviceDataDir, 'wallet.key')))
    secrets.CONTRACTS_WALLET_KEY = deriveKey(root, 'contracts/wallet-seal').toString('hex');
  return secrets;
}

/**
 * What the daemon `up` runs itself gets for its one user: DAEMON_USER_ID (the setting, or the id in its folder,
 * generated there the first time, as the daemon itself would), its bearer (derived from the router's root as the
 * router derives each daemon's) and that user's owner token for each service that scopes by owner (kit
 * `daemonOwnerTokens`: memory, contract engine, ...), minted from that service's root (the environment's setting, or
 * the derived one). They replace any such setting the environment holds: under `up` that is a root, which no daemon
 * may hold.
 */
export function daemonUserSecrets(root: Buffer, env: Env, daemonDataDir: string): Record<string, string> {
  const userId = userIdFromSettingOrFile(env.DAEMON_USER_ID ?? '', daemonDataDir);
  const roots = Object.fromEntries(daemonOwnerTokens.map(({ setting }) => [setting, env[setting] || derivedValue(setting, root)]));
  return { DAEMON_USER_ID: userId, PLATFORM_DAEMON_TOKEN: daemonBearer(root, env, userId), ...daemonOwnerTokenMinter(roots)(userId) };
}

/** One user's daemon bearer under `up`: from PLATFORM_DAEMON_TOKEN (the router's root) if set, else the derived root. */
export function daemonBearer(root: Buffer, env: Env, userId: string): string {
  return daemonTokenFor(env.PLATFORM_DAEMON_TOKEN || (derivedValue('PLATFORM_DAEMON_TOKEN', root) as string))(userId);
}

/** The value of one derived setting (for `platform secret <SETTING>`); undefined for a name that is not derived. */
export function derivedValue(setting: string, root: Buffer): string | undefined {
  const entry = derivedSettings.find((candidate) => candidate.setting === setting);
  return entry && deriveSecret(root, entry.label);
}
