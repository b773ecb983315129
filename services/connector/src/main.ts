import { NonceStore } from '@platform/kit/auth/nonce-store';
import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { repeatEvery, runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { buildApp, serviceName } from './app.ts';
import { developmentSecret, loadConfig } from './config.ts';
import { ConnectionsRepository } from './connections/connections.repository.ts';
import { Resealer } from './connections/reseal.ts';
import { migrations } from './db/migrations.ts';
import type { ConnectorSchema } from './db/schema.ts';
import { connectorLimits } from './limits.ts';
import { ConnectStatesRepository } from './oauth/connect-states.repository.ts';
import { resolveKeyring } from './vault/keyring.ts';
import { Vault } from './vault/vault.ts';

const noncePurgeIntervalMs = 5 * 60 * 1000;

/** Starts the connector service from an environment map: config, vault, database, migrations, HTTP, re-seal. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  if (config.agentAuthSecret === '') logger.warn('CONNECTOR_AGENT_AUTH_SECRET is empty: using the built-in development secret; not a production configuration');
  const { keyring, source } = resolveKeyring(config.vaultKeys, config.dataDir);
  // Ids and where they came from only: key material never reaches a log.
  const vault = new Vault(keyring);
  logger.info(
    { keyIds: [...keyring.keys.keys()], currentKeyId: vault.currentKeyId, retiredKeyIds: vault.retiredKeyIds, stagedKeyIds: vault.stagedKeyIds, source },
    'vault keys loaded',
  );
  const metrics = createServiceMetrics(serviceName);
  const database = await openDatabase<ConnectorSchema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: serviceName, logger, metrics });
  await migrate(database, serviceName, migrations);
  const clock = systemClock;
  const tracing = await startTracing(env, serviceName);
  const app = buildApp({
    db: database.db,
    ping: () => database.ping(),
    clock,
    logger,
    vault,
    transportToken: config.transportToken,
    metrics,
    metricsToken: config.metricsToken,
    agentAuthSecret: config.agentAuthSecret || developmentSecret,
    providers: { googleApiUrl: config.googleApiUrl, timeoutMs: config.providerTimeoutMs },
    oauth: config.oauth,
    tracing,
  });
  // Names only: which providers can be connected, never an id's secret.
  const unconfigured = Object.entries(config.oauth.clients)
    .filter(([, client]) => !client.clientId)
    .map(([provider]) => provider);
  if (unconfigured.length > 0)
    logger.warn({ providers: unconfigured }, 'OAuth clients not configured (CONNECTOR_<provider>_CLIENT_ID and _SECRET): connecting answers 503');
  const resealer = new Resealer({ repository: new ConnectionsRepository(database.db, vault, clock), vault, batchSize: config.resealBatch, logger });
  const stopNoncePurge = new NonceStore(database.db, clock).purgeEvery(noncePurgeIntervalMs, logger);
  const states = new ConnectStatesRepository(database.db, clock);
  const stopStatePurge = repeatEvery(connectorLimits.statePurgeIntervalMs, () => states.purgeExpired(), logger, 'connect state purge');
  const running = await serve(app, {
    host: config.host,
    port: config.port,
    logger,
    handleSignals: options.handleSignals ?? true,
    shutdownSteps: [async () => stopNoncePurge(), async () => stopStatePurge(), () => resealer.stop(), () => database.close()],
    tracing,
  });
  resealer.start(config.resealIntervalMs);
  logger.info({ url: running.url, database: database.location }, 'connector listening');
  return { ...running, name: serviceName, dataLocation: database.location };
}

if (import.meta.main) runAsMain(serviceName, start);
