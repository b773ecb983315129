import { vector } from '@electric-sql/pglite-pgvector';
import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { openDatabase } from '@platform/kit/db/open-database';
import { runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { serviceName } from './app.ts';
import { composeMemory } from './compose.ts';
import { loadConfig } from './config.ts';
import type { MemorySchema } from './db/schema.ts';

/** PGlite loads pgvector; on PostgreSQL the migration uses it when the server has it installed. */
export const pgliteExtensions = { vector };

/** Starts the memory server from an environment map: config, database, term statistics, embeddings, HTTP. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  if (config.token === '') logger.warn('MEMORY_MCP_TOKEN is empty: anyone who can reach the port can read and change every memory');
  const metrics = createServiceMetrics(serviceName);
  const database = await openDatabase<MemorySchema>({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    schema: serviceName,
    logger,
    pgliteExtensions,
    metrics,
  });
  const tracing = await startTracing(env, serviceName);
  const memory = await composeMemory(database, config, systemClock, logger, metrics, tracing);
  const running = await serve(memory.app, {
    host: config.host,
    port: config.port,
    logger,
    handleSignals: options.handleSignals ?? true,
    shutdownSteps: [() => memory.stopBackgroundWork(), () => database.close()],
    tracing,
  });
  logger.info(
    {
      url: running.url,
      database: database.location,
      vectors: config.embeddings ? memory.service.vectors : 'off',
    },
    'memory server listening',
  );
  return { ...running, name: serviceName, dataLocation: database.location };
}

if (import.meta.main) runAsMain(serviceName, start);
