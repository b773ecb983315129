import { daemonTokenFor } from '@platform/kit/auth/daemon-token';
import { daemonOwnerTokenMinter } from '@platform/kit/auth/owner-token';
import type { Clock } from '@platform/kit/clock';
import { migrate } from '@platform/kit/db/migrate';
import type { Database } from '@platform/kit/db/open-database';
import { createServiceMetrics, type ServiceMetrics } from '@platform/kit/observability/metrics';
import { type ServiceTracing, tracingOff } from '@platform/kit/observability/tracing';
import { remembered } from '@platform/kit/remembered';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import { buildInternalApp, buildPublicApp, serviceName, serviceVersion } from './app.ts';
import { JwtVerifier } from './auth/jwt-verifier.ts';
import type { RouterConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { RouterSchema } from './db/schema.ts';
import { daemonMetricsTokenFor } from './environments/daemon-metrics.ts';
import { FlyProvider } from './environments/fly-provider.ts';
import { Activity, IdleReaper } from './environments/idle-reaper.ts';
import { ProcessProvider } from './environments/process-provider.ts';
import type { EnvironmentProvider } from './environments/provider.ts';
import { probeHealth, probeWorking, WakeCoordinator } from './environments/wake-coordinator.ts';
import { InvitesRepository } from './invites/invites.repository.ts';
import { routerMetrics } from './metrics.ts';
import { environmentUser } from './routes/proxy-route.ts';
import type { RouteDeps } from './routes/route-deps.ts';
import { UserAccess } from './users/access.ts';
import { Provisioner } from './users/provisioner.ts';
import { UserDirectory } from './users/user-directory.ts';
import { UsersRepository, usersChannel } from './users/users.repository.ts';

export interface ComposedRouter {
  publicApp: Awaited<ReturnType<typeof buildPublicApp>>;
  internalApp: Awaited<ReturnType<typeof buildInternalApp>>;
  deps: RouteDeps;
  reaper: IdleReaper;
  /** Stops the reaper and (when configured) the daemons, closes sockets and the notification listener. */
  release(): Promise<void>;
}

/**
 * The per-user secrets a daemon starts with: its own bearer, its user's owner token for each service whose root the
 * router holds (memory, contract engine, ...: kit `daemonOwnerTokens`), so the daemon acts for its own user and nobody
 * else at each of them, and with PLATFORM_METRICS_TOKEN set its own metrics bearer (`daemonMetricsTokenFor`).
 */
export function daemonSecrets(roots: {
  daemonTokenRoot: string;
  ownerTokenRoots: Readonly<Record<string, string>>;
  metricsToken?: string;
}): (userId: string) => Record<string, string> {
  const bearer = daemonTokenFor(roots.daemonTokenRoot);
  const owned = daemonOwnerTokenMinter(roots.ownerTokenRoots);
  const metrics = roots.metricsToken ? daemonMetricsTokenFor(roots.metricsToken) : undefined;
  return (userId) => ({ PLATFORM_DAEMON_TOKEN: bearer(userId), ...owned(userId), ...(metrics && { PLATFORM_METRICS_TOKEN: metrics(userId) }) });
}

/** The provider ROUTER_PROVIDER names; the Kubernetes client (a large module) is loaded only when it is the one. */
async function chooseProvider(
  config: RouterConfig,
  options: { clock: Clock; logger: Logger; secretsFor: (userId: string) => Record<string, string>; tokenFor: (userId: string) => string },
): Promise<EnvironmentProvider> {
  const { clock, logger, secretsFor } = options;
  if (config.provider === 'fly' && config.fly) return new FlyProvider(config.fly, { secretsFor, daemonPort: config.daemonPort, logger });
  if (config.provider === 'kubernetes' && config.kubernetes) {
    const { KubernetesProvider } = await import('./environments/kubernetes-provider.ts');
    return new KubernetesProvider(config.kubernetes, { secretsFor, daemonPort: config.daemonPort, clock, pollMs: config.probeIntervalMs, logger });
  }
  return new ProcessProvider(config.processProvider, { tokenFor: options.tokenFor, secretsFor, logger });
}

/** Everything between an open database and two listening apps, shared by main and the tests. */
export async function composeRouter(
  database: Database<RouterSchema>,
  config: RouterConfig,
  options: { clock: Clock; logger: Logger; daemonTokenRoot: string; provider?: EnvironmentProvider; metrics?: ServiceMetrics; tracing?: ServiceTracing },
): Promise<ComposedRouter> {
  const { clock, logger } = options;
  await migrate(database, serviceName, migrations);
  // An HMAC a proxied request otherwise: remembered per user, as the verified JWTs are.
  const daemonToken = remembered(daemonTokenFor(options.daemonTokenRoot), 10_000);
  const secretsFor = daemonSecrets({
    daemonTokenRoot: options.daemonTokenRoot,
    ownerTokenRoots: config.ownerTokenRoots,
    metricsToken: config.metricsToken,
  });
  const provider: EnvironmentProvider = options.provider ?? (await chooseProvider(config, { clock, logger, secretsFor, tokenFor: daemonToken }));
  const users = new UsersRepository(database.db, clock);
  const directory = new UserDirectory(users, clock);
  const unlisten = await database.listen(usersChannel, (id) => (id ? directory.invalidate(id) : directory.clear()));
  const invites = new InvitesRepository(database.db, clock);
  const provisioner = new Provisioner({ users, directory, provider, clock, logger, defaultRegion: config.defaultRegion });
  const activity = new Activity(clock);
  const serviceMetrics = options.metrics ?? createServiceMetrics(serviceName);
  // Read when scraped; `wake` and `access` exist by then.
  const metrics = routerMetrics(serviceMetrics, {
    countByState: () => users.countByState(),
    running: () => provider.running().length,
    waiting: () => {
      const wakes = wake.totals();
      return { flights: wakes.flights, waiters: wakes.waiters + access.totals().waiters };
    },
  });
  const wake = new WakeCoordinator({
    provider,
    clock,
    logger,
    probeIntervalMs: config.probeIntervalMs,
    wakeTimeoutMs: config.wakeTimeoutMs,
    maxWaiters: config.maxWaiters,
    probe: probeHealth,
    metrics: metrics.wakes,
  });
  const access = new UserAccess({ directory, invites, provisioner, clock, wakeTimeoutMs: config.wakeTimeoutMs, maxWaiters: config.maxWaiters });
  // undici's own timeouts off: the proxy's idle watch (ROUTER_PROXY_TIMEOUT) times both directions of an exchange.
  const upstreamAgent = (connections: number) => new Agent({ connections, headersTimeout: 0, bodyTimeout: 0 });
  const agents = { environments: upstreamAgent(1024), gateway: upstreamAgent(256) };
  const deps: RouteDeps = {
    config,
    clock,
    logger,
    version: serviceVersion,
    ping: () => database.ping(),
    users,
    directory,
    invites,
    provisioner,
    access,
    provider,
    wake,
    activity,
    verifier: config.identityProvider ? new JwtVerifier(config.identityProvider, clock, logger) : undefined,
    daemonToken,
    agents,
    metrics,
    serviceMetrics,
    tracing: options.tracing ?? tracingOff,
  };
  const reaper = new IdleReaper({
    provider,
    activity,
    clock,
    logger,
    idleTimeoutMs: config.idleTimeoutMs,
    lookup: async (id) => {
      const row = await users.get(id);
      return row ? environmentUser(row) : undefined;
    },
    working: async (user) => {
      const address = await provider.address(user);
      return address !== undefined && (await probeWorking(address));
    },
  });
  const publicApp = await buildPublicApp(deps);
  const internalApp = await buildInternalApp(deps);
  return {
    publicApp,
    internalApp,
    deps,
    reaper,
    async release() {
      await reaper.stop();
      await provider.close();
      await Promise.all([agents.environments.destroy(), agents.gateway.destroy()]);
      await unlisten();
    },
  };
}
