import { join } from 'node:path';
import { ConfigError, type Env } from '@platform/kit/config';
import { freePort } from '@platform/kit/free-port';
import type { StartedService } from '@platform/kit/lifecycle';
import { tracingEnv } from '@platform/kit/observability/tracing-settings';
import { useTerminalLogLines } from '@platform/kit/terminal-log-lines';
import { ensureBundle } from '../../services/daemon/scripts/bundle.mjs';
import { ensureConsoleBuild } from '../../web/console/scripts/build.ts';
import { inviteDevUser, routerIdentitySettings, withConsoleOrigins } from './dev-identity/up-identity.ts';
import { checkInstancesSettings, startInstances } from './instances.ts';
import { metricsTargets, observeMessage, writeObserveFiles } from './observe.ts';
import { daemonUserSecrets, rootSecret, secretsFor, serviceDataDir } from './platform-secrets.ts';
import { readyMessage } from './ready-message.ts';
import { findService, type ServiceEntry, services } from './services.ts';

/**
 * Starts every service in this process (independent ones at once), prints where each listens, and runs until
 * SIGINT/SIGTERM; then stops them, each before the services it depends on. Their shared secrets are derived from one
 * root secret (platform-secrets.ts), so nothing starts open. A second signal exits at once. Resolves to the exit code.
 */
export async function up(
  env: Env,
  instances: ReadonlyMap<string, number> = new Map(),
  options: { logRequests?: boolean; observe?: boolean } = {},
): Promise<number> {
  // A person at a terminal reads one line per event, prefixed by its service; elsewhere logs stay JSON lines.
  if (process.stdout.isTTY) useTerminalLogLines({ requests: options.logRequests === true || ['debug', 'trace'].includes(env.LOG_LEVEL ?? ''), color: true });
  let stopRequested = false;
  const { promise: signalled, resolve } = Promise.withResolvers<NodeJS.Signals>();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopRequested) {
      console.error(`platform up: second ${signal}, exiting now`);
      process.exit(1);
    }
    stopRequested = true;
    console.error(`platform up: ${signal}, stopping`);
    resolve(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // The router starts each user's daemon from its bundle and serves the console's build: rebuild either when a source
  // changed since `npm install`.
  await ensureBundle();
  await ensureConsoleBuild();
  let root: ReturnType<typeof rootSecret>;
  try {
    checkInstancesSettings(instances, env);
    root = rootSecret(env);
  } catch (error) {
    console.error(`platform up: ${describeError(error)}`);
    return 1;
  }
  const { started, ...result } = await startAll(await withConsoleOrigins(await withPlannedAddresses(env)), root.key, () => stopRequested, instances);
  let failure = result.failure;
  const identity = started.find((service) => service.name === 'identity');
  const router = started.find((service) => service.name === 'router');
  if (failure === undefined && identity !== undefined && router !== undefined)
    await inviteDevUser(identity, router, root.key, env).catch((error: unknown) => {
      failure = { name: 'identity', error };
    });
  const rows = services.flatMap((entry) => started.filter((service) => service.name === entry.name || service.name.startsWith(`${entry.name}-`)));
  // "Ready" only for a whole platform: every row of the table must answer its /healthz.
  if (failure === undefined && !stopRequested) failure = await firstUnhealthy(rows);
  if (failure) {
    await stopAll(started);
    console.error(`platform up: ${failure.name} failed to start: ${describeError(failure.error)}`);
    return 1;
  }
  if (!stopRequested) {
    // --observe: where each service's metrics are, and a Prometheus config for exactly this platform.
    let observed = '';
    if (options.observe) {
      const targets = metricsTargets(rows);
      observed = `\n${observeMessage(env, targets, writeObserveFiles(env, root.key, targets))}`;
    }
    console.log(`${readyMessage(env, rows)}${observed}`);
    await signalled;
  }
  return (await stopAll(started)) ? 0 : 1;
}

/** The first row whose `GET /healthz` does not answer 200 (within 10 s each, all asked at once), as a start failure. */
export async function firstUnhealthy(rows: readonly { name: string; url: string }[]): Promise<{ name: string; error: Error } | undefined> {
  const answers = await Promise.all(
    rows.map(async ({ name, url }) => {
      try {
        const answer = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
        const text = await answer.text();
        return answer.status === 200 ? undefined : { name, error: new UnhealthyError(`${url}/healthz answered ${answer.status}: ${text.slice(0, 300)}`) };
      } catch (error) {
        return { name, error: new UnhealthyError(`${url}/healthz did not answer: ${(error as Error).message}`) };
      }
    }),
  );
  return answers.find((answer) => answer !== undefined);
}

/** A part of the platform that started but is not healthy: one line (its `code` keeps describeError to the message). */
class UnhealthyError extends Error {
  readonly code = 'unhealthy';
}

/**
 * Starts each service as soon as the ones it waits for listen, so independent ones start together (their chain
 * deployments, file reads and database work overlap). `started` is in the order they came up, so stopping it in
 * reverse stops every service before those it depends on. On a failure nothing new starts; what is already
 * starting finishes, so that it can be stopped.
 */
async function startAll(env: Env, root: Buffer, stopRequested: () => boolean, instances: ReadonlyMap<string, number>) {
  const started: StartedService[] = [];
  let failure: { name: string; error: unknown } | undefined;
  // A service `up` does not run under these settings (the development identity provider in production) is `skipped`:
  // what waits for it starts without it. `undefined` is a failure, and what waits for it does not start.
  const skipped = Symbol('skipped');
  const starting = new Map<string, Promise<StartedService | undefined | typeof skipped>>();
  const startOne = (entry: ServiceEntry): Promise<StartedService | undefined | typeof skipped> => {
    let promise = starting.get(entry.name);
    if (promise === undefined) {
      promise = (async () => {
        if (entry.runsUnder?.(env) === false) return skipped;
        const needed = await Promise.all(entry.after.map((name) => startOne(findService(name) as ServiceEntry)));
        if (failure !== undefined || stopRequested() || needed.includes(undefined)) return undefined;
        try {
          const { start } = await entry.load();
          const own = serviceEnv(
            env,
            entry.name,
            needed.filter((service): service is StartedService => service !== undefined && service !== skipped),
          );
          const dataDir = serviceDataDir(env, entry.name);
          const secrets = secretsFor(entry.name, root, env, dataDir);
          // The daemon started here is one user's: it gets that user's memory token, never the memory server's root.
          if (entry.name === 'daemon') Object.assign(secrets, daemonUserSecrets(root, env, dataDir));
          const count = instances.get(entry.name) ?? 1;
          // Several instances each run as a process of their own (`platform serve`), as on several machines.
          if (count > 1) return await startInstances(entry.name, count, { ...own, ...secrets }, started);
          const service = await start({ ...own, ...secrets }, { handleSignals: false });
          started.push(service);
          return service;
        } catch (error) {
          failure ??= { name: entry.name, error };
          return undefined;
        }
      })();
      starting.set(entry.name, promise);
    }
    return promise;
  };
  await Promise.all(services.map(startOne));
  return { started, failure };
}

/** The daemon's links to the services `up` started before it (a setting in the environment wins). */
const daemonLinks: Readonly<Record<string, { setting: string; path: string }>> = {
  gateway: { setting: 'PLATFORM_GATEWAY_URL', path: '/v1' },
  memory: { setting: 'PLATFORM_MEMORY_URL', path: '' },
  contracts: { setting: 'PLATFORM_CONTRACTS_URL', path: '' },
  scheduler: { setting: 'PLATFORM_SCHEDULER_URL', path: '' },
  settlement: { setting: 'PLATFORM_SETTLEMENT_URL', path: '' },
  // Not called by the daemon itself: its connector proxy (a stdio child, below) reads the URL.
  connector: { setting: 'PLATFORM_CONNECTOR_URL', path: '' },
};

/**
 * The connector's tools reach a daemon through the stdio MCP proxy (`platform mcp connector`), a child the daemon
 * starts with its own agent key and only the connector's address and transport token.
 */
export function connectorProxySetting(): string {
  const bin = join(import.meta.dirname, '..', 'bin', 'platform.js');
  return JSON.stringify([
    {
      name: 'connector',
      command: process.execPath,
      args: [bin, 'mcp', 'connector'],
      env_pass: ['PLATFORM_CONNECTOR_URL', 'PLATFORM_CONNECTOR_TOKEN'],
      agent_key: true,
    },
  ]);
}

/**
 * One process, several services: each needs its own port and data folder. `<NAME>_PORT` and `<NAME>_DATA_DIR`
 * (e.g. SETTLEMENT_PORT) set them per service; otherwise each keeps its default port, PORT=0 still means
 * "any free port" for all, and DATA_DIR becomes the parent of one folder per service. The daemon (and the router,
 * for the daemons it starts) is also told where the services started before it listen.
 */
export function serviceEnv(env: Env, name: string, started: readonly { name: string; url: string; links?: Record<string, string> }[] = []): Env {
  const prefix = name.toUpperCase();
  const own: Record<string, string | undefined> = { ...env };
  const port = env[`${prefix}_PORT`] || (env.PORT === '0' ? '0' : undefined);
  // With neither setting the service keeps its own default folder.
  const dataDir = env[`${prefix}_DATA_DIR`] || env.DATA_DIR ? serviceDataDir(env, name) : undefined;
  own.PORT = port;
  own.DATA_DIR = dataDir;
  // Settlement keeps its vault on the contract engine's local chain, deploying it there itself the first time
  // (development: `platform up` is the development platform unless NODE_ENV says production).
  const localRpcUrl = started.find((service) => service.name === 'contracts')?.links?.localRpcUrl;
  if (name === 'settlement' && localRpcUrl !== undefined && !env.SETTLEMENT_RPC_URL) {
    own.SETTLEMENT_RPC_URL = localRpcUrl;
    if (env.SETTLEMENT_DEV === undefined && env.NODE_ENV !== 'production') own.SETTLEMENT_DEV = 'true';
  }
  // Settlement's vault and the marketplace's registry live on the local chain: without it the platform is missing a part.
  if (name === 'contracts' && env.CONTRACTS_LOCAL_CHAIN_REQUIRED === undefined) own.CONTRACTS_LOCAL_CHAIN_REQUIRED = 'true';
  // The marketplace pays through the settlement started here and registers listings on the same local chain.
  if (name === 'marketplace') {
    const settlement = started.find((service) => service.name === 'settlement');
    if (settlement !== undefined && !env.MARKETPLACE_SETTLEMENT_URL) own.MARKETPLACE_SETTLEMENT_URL = settlement.url;
    if (env.LEDGER_TOKEN && !env.MARKETPLACE_LEDGER_TOKEN) own.MARKETPLACE_LEDGER_TOKEN = env.LEDGER_TOKEN;
    if (localRpcUrl !== undefined && !env.MARKETPLACE_RPC_URL) own.MARKETPLACE_RPC_URL = localRpcUrl;
    if (env.MARKETPLACE_DEV === undefined && env.NODE_ENV !== 'production') own.MARKETPLACE_DEV = 'true';
  }
  // The daemon started here, and the daemons the router starts per user, reach the same services.
  if (name === 'daemon' || name === 'router') {
    for (const service of started) {
      const link = daemonLinks[service.name];
      if (link !== undefined && !env[link.setting]) own[link.setting] = `${service.url}${link.path}`;
    }
    if (started.some((service) => service.name === 'connector') && !env.DAEMON_MCP_SERVERS) own.DAEMON_MCP_SERVERS = connectorProxySetting();
    // Known before the marketplace listens (its port is planned), so the daemons need not wait for it to start.
    if (!env.PLATFORM_MARKETPLACE_URL) own.PLATFORM_MARKETPLACE_URL = marketplaceUrl(env);
  }
  // The scheduler wakes agents through the router's internal wake route, wherever the router's internal listener is.
  // The router's wake route knows the check: an alarm its agent would refuse is refused when it is made (a receiver of
  // your own might not know it, so only with the router's).
  if (name === 'scheduler' && !env.SCHEDULER_WAKE_URL) {
    own.SCHEDULER_WAKE_URL = routerWakeUrl(env);
    if (env.SCHEDULER_WAKE_CHECK === undefined) own.SCHEDULER_WAKE_CHECK = 'true';
  }
  // The console reads settlement's and the marketplace's public routes through the router. The router does not wait
  // for the marketplace (its registry deployment is the slowest start): its address is planned before it listens.
  if (name === 'router') {
    const settlement = started.find((entry) => entry.name === 'settlement')?.url;
    if (settlement !== undefined && !env.ROUTER_SETTLEMENT_URL) own.ROUTER_SETTLEMENT_URL = settlement;
    if (!env.ROUTER_MARKETPLACE_URL) own.ROUTER_MARKETPLACE_URL = marketplaceUrl(env);
  }
  // Traces (OTEL_EXPORTER_OTLP_ENDPOINT): every service under its own service.name, whatever one name the settings
  // give; that name, if any, becomes the platform's service.namespace.
  if (Object.keys(tracingEnv(env)).length > 0) {
    own.OTEL_SERVICE_NAME = name;
    const attributes = env.OTEL_RESOURCE_ATTRIBUTES ?? '';
    if (env.OTEL_SERVICE_NAME && !/(^|,)\s*service\.namespace\s*=/.test(attributes))
      own.OTEL_RESOURCE_ATTRIBUTES = [attributes, `service.namespace=${encodeURIComponent(env.OTEL_SERVICE_NAME)}`].filter((part) => part !== '').join(',');
  }
  // No daemon the router starts may outlive `up`, even one killed hard (adoption is for a router on its own).
  if (name === 'router' && !env.ROUTER_DAEMONS_EXIT_WITH_ROUTER) own.ROUTER_DAEMONS_EXIT_WITH_ROUTER = 'true';
  // The router trusts the development identity provider `up` started (only when IDP_URL names none).
  const identity = started.find((service) => service.name === 'identity');
  if (name === 'router' && identity !== undefined && !env.IDP_URL) Object.assign(own, routerIdentitySettings(identity));
  return own;
}

/**
 * Addresses some services must be told before the service they name has started. The scheduler starts before the
 * router (whose daemons need the scheduler's address) yet wakes agents at the router's internal wake route; the
 * daemons need the marketplace's URL but have no other reason to wait for it. With default ports these are known
 * (127.0.0.1:8081, 9098); under PORT=0 `up` picks the ports itself first (ROUTER_INTERNAL_ADDR, MARKETPLACE_PORT), so
 * each service listens where the others already point. A setting wins. The ports are free when picked; one taken in
 * between fails that service's start, as any taken port does.
 */
export async function withPlannedAddresses(env: Env): Promise<Env> {
  if (env.PORT !== '0') return env;
  const planned: Record<string, string> = {};
  if (!env.ROUTER_INTERNAL_ADDR) planned.ROUTER_INTERNAL_ADDR = `127.0.0.1:${await freePort()}`;
  if (!env.MARKETPLACE_PORT) planned.MARKETPLACE_PORT = String(await freePort());
  return { ...env, ...planned };
}

/** `http://<router internal address>/internal/wake`. */
export function routerWakeUrl(env: Env): string {
  const address = env.ROUTER_INTERNAL_ADDR || '127.0.0.1:8081';
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address);
  // A malformed address is the router's to refuse (naming its setting); the scheduler keeps its default meanwhile.
  if (!match) return 'http://127.0.0.1:8081/internal/wake';
  return `http://${loopback(match[1] === undefined ? (match[2] as string) : `[${match[1]}]`)}:${match[3]}/internal/wake`;
}

/** Where the marketplace listens (its port planned by withPlannedAddresses under PORT=0), before it does. */
function marketplaceUrl(env: Env): string {
  return `http://${loopback(env.HOST || '127.0.0.1')}:${env.MARKETPLACE_PORT || '9098'}`;
}

/** A listen host as a host to connect to: a wildcard address is reached on loopback. */
function loopback(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Stops services newest first; reports each failure and carries on. True when all stopped cleanly. */
async function stopAll(started: readonly StartedService[]): Promise<boolean> {
  let clean = true;
  for (const service of started.toReversed()) {
    try {
      await service.stop();
    } catch (error) {
      clean = false;
      console.error(`platform up: ${service.name} failed to stop: ${describeError(error)}`);
    }
  }
  return clean;
}

/**
 * One line for settings and system errors (ConfigError, EADDRINUSE: the message says it all);
 * anything else is a bug, so its stack follows on the next lines.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof ConfigError || error.name === 'ConfigError' || typeof (error as { code?: unknown }).code === 'string') return error.message;
  const frames = (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '));
  return [error.message, ...frames].join('\n');
}
