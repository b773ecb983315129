import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import { buildApp, serviceName } from './app.ts';
import { ensureLocalChain } from './chains/local-chain.ts';
import { loadConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { ContractsSchema } from './db/schema.ts';
import { createEngine } from './engine.ts';
import { contractsMetrics } from './metrics.ts';
import { createToolchain } from './toolchain.ts';

/** Starts the contract engine from an environment map: config, database, local chain, warm toolchain, HTTP. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  const walletKey = secretFromSettingOrFile(config.walletKeyHex, config.dataDir, 'wallet.key', 'CONTRACTS_WALLET_KEY');
  if (config.walletKeyHex === '')
    logger.warn(
      { source: walletKey.source },
      'CONTRACTS_WALLET_KEY is empty: wallet keys are sealed with a key kept in the data folder; not a production configuration',
    );
  // solc and the test process load while the database opens (a first PGlite start takes seconds).
  const toolchain = createToolchain(config, logger);
  const warming = toolchain.warm();
  warming.catch(() => undefined);
  const metrics = createServiceMetrics(serviceName);
  const database = await openDatabase<ContractsSchema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: serviceName, logger, metrics });
  await migrate(database, serviceName, migrations);
  const localChain = await ensureLocalChain(config.chains, config.dataDir, logger);
  await warming;
  const engine = createEngine({
    db: database.db,
    clock: systemClock,
    logger,
    toolchain,
    chains: config.chains,
    policy: config.policy,
    walletKeyHex: walletKey.hex,
    metrics: contractsMetrics(metrics),
  });
  const tracing = await startTracing(env, serviceName);
  const app = buildApp({
    engine,
    ping: () => database.ping(),
    logger,
    transportToken: config.transportToken,
    metrics,
    metricsToken: config.metricsToken,
    tracing,
  });
  const running = await serve(app, {
    host: config.host,
    port: config.port,
    logger,
    handleSignals: options.handleSignals ?? true,
    shutdownSteps: [() => toolchain.close(), localChain.stop, () => database.close()],
    tracing,
  });
  logger.info({ url: running.url, database: database.location }, 'contract engine listening');
  return {
    ...running,
    name: serviceName,
    dataLocation: database.location,
    ...(localChain.rpcUrl === undefined ? {} : { links: { localRpcUrl: localChain.rpcUrl } }),
  };
}

if (import.meta.main) runAsMain(serviceName, start);
