import { daemonOwnerTokens } from '@platform/kit/auth/owner-token';
import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';
import { tracingEnv } from '@platform/kit/observability/tracing-settings';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export interface IdentityProviderSettings {
  /** Base URL of the OpenID provider; its discovery document is `<url>/.well-known/openid-configuration`. */
  readonly url: string;
  /** The `iss` tokens must carry; the discovered issuer when unset. */
  readonly issuer: string | undefined;
  readonly audience: string;
  readonly algorithms: readonly string[];
  readonly leewaySeconds: number;
}

export interface ProcessProviderSettings {
  /** The daemon's entry (the bundle) and the flags it runs with. */
  readonly daemonEntry: string;
  readonly nodeFlags: readonly string[];
  /** One folder per user: the volume, holding the daemon's DATA_DIR and its log. */
  readonly volumesDir: string;
  /** The settings handed to every daemon (service URLs and their bearers). */
  readonly daemonEnv: Readonly<Record<string, string>>;
  /** Stop every daemon when the router stops (otherwise they run on, and a restarted router adopts them). */
  readonly stopOnExit: boolean;
  /**
   * Daemons also stop when the router dies without stopping them (a crash, SIGKILL), instead of waiting to be adopted:
   * for a router that is part of a larger process tree (`platform up`), which must leave no process behind.
   */
  readonly exitWithRouter: boolean;
}

/** The `kubernetes` provider: a StatefulSet of one, a PersistentVolumeClaim and a Secret per user, in one namespace. */
export interface KubernetesSettings {
  /** The API server; unset: KUBECONFIG, else the pod's own service account (in the cluster). */
  readonly apiUrl: string | undefined;
  /** A bearer for `apiUrl` (a service account token); with apiUrl only. */
  readonly apiToken: string | undefined;
  /** The CA that signed `apiUrl`'s certificate, when it is not a public one. */
  readonly apiCaFile: string | undefined;
  /** The namespace the daemons live in; unset: the router's own pod's namespace. */
  readonly namespace: string | undefined;
  readonly image: string;
  /** `imagePullPolicy` of the daemons' pods. */
  readonly imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  /** The size each user's claim asks for (a Kubernetes quantity, `1Gi`). */
  readonly volumeSize: string;
  /** The claims' storage class; unset: the cluster's default. */
  readonly storageClass: string | undefined;
  /** Labels every daemon's pod carries beside the provider's own (the chart's NetworkPolicies select them). */
  readonly podLabels: Readonly<Record<string, string>>;
  readonly memory: string;
  readonly cpu: string;
  readonly daemonEnv: Readonly<Record<string, string>>;
}

export interface FlySettings {
  readonly apiUrl: string;
  readonly apiToken: string;
  readonly appName: string;
  readonly image: string;
  readonly volumeSizeGb: number;
  readonly daemonEnv: Readonly<Record<string, string>>;
}

/** The console (web/console) the router serves at /console/, and the identity provider's client it signs in with. */
export interface ConsoleSettings {
  /** The built page (`web/console/dist`); without its index.html, /console/ answers 503 naming the build. */
  readonly dir: string;
  /** A public client (PKCE, no secret) whose redirect URI is `<router>/console/`. */
  readonly clientId: string;
  readonly scope: string;
  /** RFC 8707 `resource` to ask for, when the provider needs one to issue tokens for the router's audience. */
  readonly resource: string | undefined;
}

/** Services whose public, read-only routes the console reads through the router (GET only, an allowlist of paths). */
export interface PublicReadSettings {
  /** Settlement's explorer reads under /ledger (receipts, checkpoints, proofs, batches, supply, the transfer feed). */
  readonly settlementUrl: string | undefined;
  /** The marketplace's catalog under /market. */
  readonly marketplaceUrl: string | undefined;
}

export interface RouterConfig extends BaseConfig {
  readonly publicAddress: ListenAddress;
  readonly internalAddress: ListenAddress;
  /** Undefined in development only: then every authenticated route answers 503 naming IDP_URL. */
  readonly identityProvider: IdentityProviderSettings | undefined;
  readonly adminToken: string;
  readonly wakeToken: string;
  /** Root of the per-user daemon bearers (each daemon gets an HMAC of it and its user id). */
  readonly daemonTokenRoot: string;
  /**
   * The root bearers of the services that scope by owner (MEMORY_MCP_TOKEN, PLATFORM_CONTRACT_TOKEN, ...: kit
   * `daemonOwnerTokens`), by setting: each daemon gets the owner token of its user minted from each, never a root
   * (which would act as, or read, every user). An empty one: the daemons get no token for that service.
   */
  readonly ownerTokenRoots: Readonly<Record<string, string>>;
  readonly gatewayUrl: string;
  readonly gatewayToken: string;
  readonly daemonPort: number;
  readonly codyPort: number;
  /** `*` or exact origins. */
  readonly corsOrigins: readonly string[];
  readonly provider: 'process' | 'fly' | 'kubernetes';
  readonly defaultRegion: string;
  readonly wakeTimeoutMs: number;
  readonly proxyTimeoutMs: number;
  readonly probeIntervalMs: number;
  readonly idleTimeoutMs: number;
  readonly maxWaiters: number;
  readonly production: boolean;
  readonly processProvider: ProcessProviderSettings;
  readonly fly: FlySettings | undefined;
  readonly kubernetes: KubernetesSettings | undefined;
  readonly console: ConsoleSettings;
  readonly publicReads: PublicReadSettings;
}

/**
 * The settings every daemon gets from the router's own environment (a daemon never sees the router's secrets).
 * The services' root bearers are not among them: each daemon gets its own user's tokens (compose.ts `daemonSecrets`).
 */
export const defaultDaemonEnv = [
  'PLATFORM_GATEWAY_URL',
  'PLATFORM_MEMORY_URL',
  'PLATFORM_CONTRACTS_URL',
  'PLATFORM_SCHEDULER_URL',
  'PLATFORM_SETTLEMENT_URL',
  'LEDGER_TOKEN',
  'PLATFORM_MARKETPLACE_URL',
  'DAEMON_MCP_SERVERS',
  // For the connector's stdio proxy, which a daemon's DAEMON_MCP_SERVERS entry passes it to (env_pass), with the
  // user's own PLATFORM_CONNECTOR_TOKEN (compose.ts `daemonSecrets`).
  'PLATFORM_CONNECTOR_URL',
  'GATEWAY_MODEL_M1',
  'GATEWAY_MODEL_M2',
  'GATEWAY_MODEL_M3',
  'GATEWAY_MODEL_M4',
  'PLATFORM_COMPILER_MODEL',
  'PLATFORM_COMPILER_ESCALATION_MODEL',
  'PLATFORM_PLANNER_MODEL',
  'PLATFORM_EXECUTOR_MODEL',
  'LOG_LEVEL',
];

/** `host:port`, `[v6]:port`; an unset setting takes `fallback`. */
function address(env: Env, name: string, fallback: ListenAddress): ListenAddress {
  const raw = read.optionalString(env, name);
  if (raw === undefined) return fallback;
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(raw);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new ConfigError(`${name} must be host:port (for example 127.0.0.1:8443), got "${raw}"`);
  return { host: (match[1] ?? match[2]) as string, port };
}

/** Settings never passed through as they are, whatever ROUTER_DAEMON_ENV lists: each daemon gets its own instead. */
const perUserSettings = new Set(['PLATFORM_DAEMON_TOKEN', 'PLATFORM_METRICS_TOKEN', ...daemonOwnerTokens.map(({ setting }) => setting)]);

function daemonEnv(env: Env): Record<string, string> {
  const names =
    read
      .optionalString(env, 'ROUTER_DAEMON_ENV')
      ?.split(',')
      .map((name) => name.trim()) ?? defaultDaemonEnv;
  const picked: Record<string, string> = {};
  for (const name of names) {
    if (perUserSettings.has(name)) throw new ConfigError(`ROUTER_DAEMON_ENV may not list ${name}: each daemon gets its own user's, derived by the router`);
    if (env[name] !== undefined && env[name] !== '') picked[name] = env[name] as string;
  }
  // Every daemon traces where the router does (whatever ROUTER_DAEMON_ENV lists), under its own service name.
  const tracing = tracingEnv(env);
  if (Object.keys(tracing).length > 0) Object.assign(picked, tracing, { OTEL_SERVICE_NAME: 'daemon' });
  return picked;
}

function identityProvider(env: Env): IdentityProviderSettings | undefined {
  const url = read.optionalString(env, 'IDP_URL');
  if (url === undefined) return undefined;
  read.url(env, 'IDP_URL', url, ['http:', 'https:'], false);
  const audience = read.optionalString(env, 'ROUTER_IDP_AUDIENCE');
  if (audience === undefined) throw new ConfigError('ROUTER_IDP_AUDIENCE is required with IDP_URL (the aud tokens must be issued for)');
  const algorithms = read
    .string(env, 'ROUTER_JWT_ALGORITHMS', 'RS256,PS256,ES256,EdDSA')
    .split(',')
    .map((algorithm) => algorithm.trim());
  for (const algorithm of algorithms)
    if (!/^(RS|PS|ES)(256|384|512)$|^EdDSA$/.test(algorithm))
      throw new ConfigError(`ROUTER_JWT_ALGORITHMS may list asymmetric algorithms only (RS*, PS*, ES*, EdDSA), got "${algorithm}"`);
  return Object.freeze({
    url: url.replace(/\/+$/, ''),
    issuer: read.optionalString(env, 'ROUTER_IDP_ISSUER'),
    audience,
    algorithms: Object.freeze(algorithms),
    leewaySeconds: read.integer(env, 'ROUTER_JWT_LEEWAY_SECONDS', 30, { min: 0, max: 300 }),
  });
}

function fly(env: Env): FlySettings | undefined {
  if (read.string(env, 'ROUTER_PROVIDER', 'process') !== 'fly') return undefined;
  const required = (name: string) => {
    const value = read.optionalString(env, name);
    if (value === undefined) throw new ConfigError(`${name} is required with ROUTER_PROVIDER=fly`);
    return value;
  };
  return Object.freeze({
    apiUrl: read.url(env, 'FLY_API_URL', 'https://api.machines.dev', ['http:', 'https:']).replace(/\/+$/, ''),
    apiToken: required('FLY_API_TOKEN'),
    appName: required('FLY_APP_NAME'),
    image: required('FLY_DAEMON_IMAGE'),
    volumeSizeGb: read.integer(env, 'FLY_VOLUME_SIZE_GB', 1, { min: 1, max: 500 }),
    daemonEnv: Object.freeze(daemonEnv(env)),
  });
}

const quantity = /^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$/;
const labelPart = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

function kubernetes(env: Env): KubernetesSettings | undefined {
  if (read.string(env, 'ROUTER_PROVIDER', 'process') !== 'kubernetes') return undefined;
  const image = read.optionalString(env, 'K8S_DAEMON_IMAGE');
  if (image === undefined) throw new ConfigError('K8S_DAEMON_IMAGE is required with ROUTER_PROVIDER=kubernetes');
  const apiUrl = read.optionalString(env, 'K8S_API_URL');
  if (apiUrl !== undefined) read.url(env, 'K8S_API_URL', apiUrl, ['http:', 'https:'], false);
  const apiToken = read.optionalString(env, 'K8S_API_TOKEN');
  const apiCaFile = read.optionalString(env, 'K8S_API_CA_FILE');
  if ((apiToken !== undefined || apiCaFile !== undefined) && apiUrl === undefined)
    throw new ConfigError(`${apiToken !== undefined ? 'K8S_API_TOKEN' : 'K8S_API_CA_FILE'} is for K8S_API_URL, which is not set`);
  const sized = (name: string, fallback: string) => {
    const value = read.string(env, name, fallback);
    if (!quantity.test(value)) throw new ConfigError(`${name} must be a Kubernetes quantity (for example ${fallback}), got "${value}"`);
    return value;
  };
  const podLabels: Record<string, string> = {};
  for (const pair of (read.optionalString(env, 'K8S_DAEMON_LABELS') ?? '').split(',').filter((part) => part.trim() !== '')) {
    const [key, value, extra] = pair.trim().split('=');
    const name = key?.split('/').at(-1) ?? '';
    if (extra !== undefined || value === undefined || !labelPart.test(name) || (value !== '' && !labelPart.test(value)))
      throw new ConfigError(`K8S_DAEMON_LABELS must be key=value pairs separated by commas, got "${pair.trim()}"`);
    podLabels[key as string] = value;
  }
  const pullPolicy = read.string(env, 'K8S_IMAGE_PULL_POLICY', 'IfNotPresent');
  if (pullPolicy !== 'Always' && pullPolicy !== 'IfNotPresent' && pullPolicy !== 'Never')
    throw new ConfigError(`K8S_IMAGE_PULL_POLICY must be Always, IfNotPresent or Never, got "${pullPolicy}"`);
  const namespace = read.optionalString(env, 'K8S_NAMESPACE');
  if (namespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
    throw new ConfigError(`K8S_NAMESPACE must be a namespace name (lowercase letters, digits and -), got "${namespace}"`);
  return Object.freeze({
    apiUrl: apiUrl?.replace(/\/+$/, ''),
    apiToken,
    apiCaFile,
    namespace,
    image,
    imagePullPolicy: pullPolicy,
    volumeSize: sized('K8S_VOLUME_SIZE', '1Gi'),
    storageClass: read.optionalString(env, 'K8S_STORAGE_CLASS'),
    podLabels: Object.freeze(podLabels),
    memory: sized('K8S_DAEMON_MEMORY', '256Mi'),
    cpu: sized('K8S_DAEMON_CPU', '100m'),
    daemonEnv: Object.freeze(daemonEnv(env)),
  });
}

/**
 * The router's settings, parsed once. The spec lists ROUTER_ADDR, ROUTER_INTERNAL_ADDR, IDP_URL and DATABASE_URL as
 * required; in development they default (8443, 8081, no identity provider, embedded PGlite); with NODE_ENV=production
 * IDP_URL, DATABASE_URL and a daemon token root are required.
 */
/**
 * The proxy streams to the gateway and the public reads with node:http over the private network: an `https:` URL
 * would have gone out unencrypted to port 80, so only `http:` is taken.
 */
const proxiedProtocols = ['http:'];

function optionalUrl(env: Env, name: string): string | undefined {
  const url = read.optionalString(env, name);
  if (url === undefined) return undefined;
  read.url(env, name, url, proxiedProtocols, false);
  return url.replace(/\/+$/, '');
}

export function loadConfig(env: Env, defaults: { daemonEntry: string; nodeFlags: readonly string[]; consoleDir: string }): RouterConfig {
  const base = readBaseConfig(env, { service: 'router', defaultPort: 8443 });
  const production = read.string(env, 'NODE_ENV', '') === 'production';
  // `platform up` passes PORT (0 in tests): the public port, and a free internal one too when it is 0.
  const publicAddress = address(env, 'ROUTER_ADDR', { host: base.host, port: base.port });
  const internalAddress = address(env, 'ROUTER_INTERNAL_ADDR', { host: '127.0.0.1', port: env.PORT === '0' ? 0 : 8081 });
  const idp = identityProvider(env);
  const provider = read.string(env, 'ROUTER_PROVIDER', 'process');
  if (provider !== 'process' && provider !== 'fly' && provider !== 'kubernetes')
    throw new ConfigError(`ROUTER_PROVIDER must be process, fly or kubernetes, got "${provider}"`);
  const daemonTokenRoot = read.string(env, 'PLATFORM_DAEMON_TOKEN', '');
  if (production) {
    if (idp === undefined) throw new ConfigError('IDP_URL is required in production');
    if (base.databaseUrl === undefined) throw new ConfigError('DATABASE_URL is required in production');
    if (daemonTokenRoot === '') throw new ConfigError('PLATFORM_DAEMON_TOKEN is required in production (the root of every daemon’s bearer)');
  }
  const origins = read
    .string(env, 'ROUTER_CORS_ORIGINS', '*')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  return Object.freeze({
    ...base,
    publicAddress,
    internalAddress,
    identityProvider: idp,
    adminToken: read.string(env, 'ROUTER_ADMIN_TOKEN', ''),
    wakeToken: read.string(env, 'ROUTER_WAKE_TOKEN', ''),
    daemonTokenRoot,
    ownerTokenRoots: Object.freeze(Object.fromEntries(daemonOwnerTokens.map(({ setting }) => [setting, read.string(env, setting, '')]))),
    gatewayUrl: read.url(env, 'ROUTER_GATEWAY_URL', 'http://127.0.0.1:9090', proxiedProtocols).replace(/\/+$/, ''),
    gatewayToken: read.string(env, 'PLATFORM_GATEWAY_TOKEN', ''),
    daemonPort: read.integer(env, 'ROUTER_DAEMON_PORT', 8080, { min: 1, max: 65535 }),
    codyPort: read.integer(env, 'ROUTER_CODY_PORT', 8090, { min: 1, max: 65535 }),
    corsOrigins: Object.freeze(origins.length > 0 ? origins : ['*']),
    provider,
    defaultRegion: read.string(env, 'ROUTER_DEFAULT_REGION', provider === 'fly' ? 'iad' : 'local'),
    wakeTimeoutMs: read.duration(env, 'ROUTER_WAKE_TIMEOUT', '30s', { min: 100, max: 600_000 }),
    proxyTimeoutMs: read.duration(env, 'ROUTER_PROXY_TIMEOUT', '5m', { min: 100, max: 3_600_000 }),
    probeIntervalMs: read.duration(env, 'ROUTER_PROBE_INTERVAL', '250ms', { min: 1, max: 60_000 }),
    idleTimeoutMs: read.duration(env, 'ROUTER_IDLE_TIMEOUT', '15m', { min: 1_000, max: 86_400_000 }),
    maxWaiters: read.integer(env, 'ROUTER_MAX_WAITERS', 2048, { min: 1, max: 100_000 }),
    production,
    processProvider: Object.freeze({
      daemonEntry: read.string(env, 'ROUTER_DAEMON_ENTRY', defaults.daemonEntry),
      nodeFlags: defaults.nodeFlags,
      volumesDir: read.string(env, 'ROUTER_VOLUMES_DIR', `${base.dataDir}/volumes`),
      daemonEnv: Object.freeze(daemonEnv(env)),
      stopOnExit: read.boolean(env, 'ROUTER_STOP_DAEMONS_ON_EXIT', true),
      exitWithRouter: read.boolean(env, 'ROUTER_DAEMONS_EXIT_WITH_ROUTER', false),
    }),
    fly: fly(env),
    kubernetes: kubernetes(env),
    console: Object.freeze({
      dir: read.string(env, 'ROUTER_CONSOLE_DIR', defaults.consoleDir),
      clientId: read.string(env, 'ROUTER_CONSOLE_CLIENT_ID', 'platform-console'),
      scope: read.string(env, 'ROUTER_CONSOLE_SCOPE', 'openid'),
      resource: read.optionalString(env, 'ROUTER_CONSOLE_RESOURCE'),
    }),
    publicReads: Object.freeze({ settlementUrl: optionalUrl(env, 'ROUTER_SETTLEMENT_URL'), marketplaceUrl: optionalUrl(env, 'ROUTER_MARKETPLACE_URL') }),
  });
}
