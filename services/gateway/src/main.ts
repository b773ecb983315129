import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { buildApp, serviceName } from './app.ts';
import { loadConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { GatewaySchema } from './db/schema.ts';
import { RateCardBook } from './rate-cards/rate-card-book.ts';
import { readRateCardDir } from './rate-cards/rate-card-file.ts';
import { RateCardsRepository } from './rate-cards/rate-cards.repository.ts';
import { DrainSlots } from './streaming/drain-slots.ts';

const rateCardRefreshMs = 60_000;

/** Starts the gateway: config, database, migrations, rate cards (files → database → memory), HTTP. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  // Read before the database opens: a malformed card stops the start with one line naming the file.
  const cards = readRateCardDir(config.rateCardDir);
  const metrics = createServiceMetrics(serviceName);
  const tracing = await startTracing(env, serviceName);
  const database = await openDatabase<GatewaySchema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: serviceName, logger, metrics });
  try {
    await migrate(database, serviceName, migrations);
    const clock = systemClock;
    const repository = new RateCardsRepository(database.db, clock);
    const added = await repository.publish(cards);
    if (added.length > 0) logger.info({ versions: added }, 'rate cards published');
    const book = new RateCardBook(repository, logger);
    await book.load();
    const stopFollowing = await book.follow((channel, onPayload) => database.listen(channel, onPayload), rateCardRefreshMs);
    const app = buildApp({
      db: database.db,
      databaseKind: database.kind,
      ping: () => database.ping(),
      listen: (channel, onPayload) => database.listen(channel, onPayload),
      clock,
      logger,
      settings: config,
      book,
      drains: new DrainSlots(config.maxDrains),
      metrics,
      metricsToken: config.metricsToken,
      tracing,
    });
    const running = await serve(app, {
      host: config.host,
      port: config.port,
      logger,
      handleSignals: options.handleSignals ?? true,
      shutdownSteps: [stopFollowing, () => database.close()],
      tracing,
    });
    logger.info({ url: running.url, database: database.location, rateCard: book.current().version }, 'gateway listening');
    return { ...running, name: serviceName, dataLocation: database.location };
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
}

if (import.meta.main) runAsMain(serviceName, start);
