import type { Clock } from '@platform/kit/clock';
import { migrate } from '@platform/kit/db/migrate';
import type { Database } from '@platform/kit/db/open-database';
import { repeatEvery } from '@platform/kit/lifecycle';
import { createServiceMetrics, type ServiceMetrics } from '@platform/kit/observability/metrics';
import type { ServiceTracing } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import { buildApp, serviceName } from './app.ts';
import type { MemoryConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { MemorySchema } from './db/schema.ts';
import { type Embedder, openAiEmbedder } from './embeddings/embedder.ts';
import { backfillEmbeddings, prepareEmbeddings } from './embeddings/embedding-upkeep.ts';
import { MemoryService } from './memory/memory-service.ts';
import { prepareTextSearch } from './memory/text-search-setup.ts';
import { memoryMetrics } from './metrics.ts';

const backfillIntervalMs = 30_000;

export interface ComposedMemory {
  app: ReturnType<typeof buildApp>;
  service: MemoryService;
  /** Runs one backfill round now (tests; the timer runs it every 30 s). */
  backfill: () => Promise<number>;
  /** Stops the backfill timer and waits for a round in progress. */
  stopBackgroundWork: () => Promise<void>;
}

/**
 * Everything between an open database and a listening app, shared by main and the tests: migrations, the text
 * search configuration, term statistics, embeddings (index, backfill) and the routes.
 */
export async function composeMemory(
  database: Database<MemorySchema>,
  config: MemoryConfig,
  clock: Clock,
  logger: Logger,
  /** The service's metrics, the database's among them (main opens the database with them); served behind PLATFORM_METRICS_TOKEN. */
  metrics: ServiceMetrics = createServiceMetrics(serviceName),
  tracing?: ServiceTracing,
): Promise<ComposedMemory> {
  await migrate(database, serviceName, migrations);
  await prepareTextSearch(database.db, config.textSearchConfig);
  const embedder: Embedder | undefined = config.embeddings ? openAiEmbedder(config.embeddings) : undefined;
  const counts = memoryMetrics(metrics);
  const service = await MemoryService.open({
    metrics: counts,
    db: database.db,
    clock,
    logger,
    textSearchConfig: config.textSearchConfig,
    embedder,
    recencyHalfLifeDays: config.recencyHalfLifeDays,
  });
  counts.readMemoriesFrom(() => service.countHeld());
  let backfill = async () => 0;
  let stopTimer = () => {};
  // The round in progress, so stopping waits for it instead of closing the database under it.
  let running: Promise<unknown> = Promise.resolve();
  if (embedder !== undefined) {
    await prepareEmbeddings(database.db, service.vectors, embedder);
    backfill = () => {
      const round = backfillEmbeddings(database.db, service.vectors, embedder, logger);
      running = round.catch(() => undefined);
      return round;
    };
    backfill().catch((error) => logger.warn({ err: error }, 'embedding backfill failed; retrying later'));
    stopTimer = repeatEvery(backfillIntervalMs, backfill, logger, 'embedding backfill');
  }
  const stopBackgroundWork = async () => {
    stopTimer();
    await running;
  };
  const app = buildApp({
    service,
    ping: () => database.ping(),
    logger,
    token: config.token,
    metrics,
    metricsToken: config.metricsToken,
    ...(tracing && { tracing }),
  });
  return { app, service, backfill, stopBackgroundWork };
}
