import { NonceStore } from '@platform/kit/auth/nonce-store';
import { deriveTokenKey } from '@platform/kit/auth/principal-token';
import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { buildApp, serviceName } from './app.ts';
import { developmentSecret, loadConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { MarketplaceSchema } from './db/schema.ts';
import { createDeveloperAuth } from './developers/developer-auth.ts';
import { createHosting } from './hosting/hosting.ts';
import { loadIdentity } from './identity.ts';
import { marketplaceMetrics } from './metrics.ts';
import { createPayments } from './payments/payments.ts';

const noncePurgeIntervalMs = 5 * 60 * 1000;

/** Starts the marketplace: config, identity, database, migrations, HTTP. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  if (config.agentAuthSecret === '')
    logger.warn('MARKETPLACE_AGENT_AUTH_SECRET is empty: using the built-in development secret; not a production configuration');
  const identity = loadIdentity(config);
  const metrics = createServiceMetrics(serviceName);
  const database = await openDatabase<MarketplaceSchema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: serviceName, logger, metrics });
  await migrate(database, serviceName, migrations);
  const clock = systemClock;
  const secret = config.agentAuthSecret || developmentSecret;
  const tokenKey = deriveTokenKey(secret, serviceName);
  // The listing cache is the payments'; a deployment switch makes it forget the listing at once.
  const forget = { listing: (_id: string) => {} };
  const hosting = createHosting({ db: database.db, clock, logger, config, secret, switched: (id) => forget.listing(id) });
  await hosting.recover();
  const payments = createPayments({
    db: database.db,
    clock,
    logger,
    config,
    identity,
    hosted: hosting.calls,
    metrics: marketplaceMetrics(metrics, database.db),
  });
  forget.listing = (id) => payments.desk.listings.forget(id);
  const developers = createDeveloperAuth({ db: database.db, clock, secret, config });
  const deps = { db: database.db, clock, logger, config, identity, tokenKey, developers, payments, hosting };
  const tracing = await startTracing(env, serviceName);
  const app = buildApp({ ...deps, ping: () => database.ping(), metrics, metricsToken: config.metricsToken, tracing });
  const stopNoncePurge = new NonceStore(database.db, clock).purgeEvery(noncePurgeIntervalMs, logger);
  const stopSweeping = payments.startSweeping();
  const running = await serve(app, {
    host: config.host,
    port: config.port,
    logger,
    handleSignals: options.handleSignals ?? true,
    shutdownSteps: [async () => stopNoncePurge(), stopSweeping, () => payments.close(), () => hosting.close(), () => database.close()],
    tracing,
  });
  logger.info({ url: running.url, database: database.location, did: identity.agent.did, signer: identity.signer.address }, 'marketplace listening');
  return { ...running, name: serviceName, dataLocation: database.location };
}

if (import.meta.main) runAsMain(serviceName, start);
