import { NonceStore } from '@platform/kit/auth/nonce-store';
import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { AlarmsRepository, alarmsChannel } from './alarms/alarms.repository.ts';
import { buildApp, serviceName } from './app.ts';
import { developmentSecret, loadConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { SchedulerSchema } from './db/schema.ts';
import { Dispatcher } from './dispatch/dispatcher.ts';
import { httpWakeCheck } from './dispatch/wake-check.ts';
import { httpWakeDelivery } from './dispatch/wake-delivery.ts';
import { schedulerMetrics } from './metrics.ts';

const noncePurgeIntervalMs = 5 * 60 * 1000;

/** Starts the scheduler from an environment map: config, database, migrations, HTTP, dispatcher. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  if (config.agentAuthSecret === '') logger.warn('SCHEDULER_AGENT_AUTH_SECRET is empty: using the built-in development secret; not a production configuration');
  const metrics = createServiceMetrics(serviceName);
  const tracing = await startTracing(env, serviceName);
  const database = await openDatabase<SchedulerSchema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: serviceName, logger, metrics });
  await migrate(database, serviceName, migrations);
  const clock = systemClock;
  const repository = new AlarmsRepository(database.db, clock);
  const counting = schedulerMetrics(metrics, { alarmsDue: () => repository.countDue() });
  const app = buildApp({
    db: database.db,
    ping: () => database.ping(),
    clock,
    logger,
    transportToken: config.transportToken,
    metrics,
    metricsToken: config.metricsToken,
    tracing,
    agentAuthSecret: config.agentAuthSecret || developmentSecret,
    ...(config.wakeCheck && {
      checkWakeable: httpWakeCheck({ url: config.wakeUrl, token: config.wakeToken, timeoutMs: config.wakeTimeoutMs, clock, logger }),
    }),
  });
  const dispatcher = new Dispatcher({
    repository,
    // One socket per delivery in flight, so no wake spends its timeout queued for a socket.
    deliver: httpWakeDelivery({
      url: config.wakeUrl,
      token: config.wakeToken,
      timeoutMs: config.wakeTimeoutMs,
      connections: config.dispatchConcurrency,
      tracing,
    }),
    clock,
    logger,
    onAlarmCreated: (hint) => database.listen(alarmsChannel, hint),
    concurrency: config.dispatchConcurrency,
    leaseMs: config.leaseMs,
    maxIdleMs: 60_000,
    metrics: counting,
  });
  const stopNoncePurge = new NonceStore(database.db, clock).purgeEvery(noncePurgeIntervalMs, logger);
  const running = await serve(app, {
    host: config.host,
    port: config.port,
    logger,
    handleSignals: options.handleSignals ?? true,
    shutdownSteps: [async () => stopNoncePurge(), () => (config.dispatcherEnabled ? dispatcher.stop() : Promise.resolve()), () => database.close()],
    tracing,
  });
  // Only after the port is ours: a start that fails to listen must not have claimed alarms it will never fire.
  if (config.dispatcherEnabled) await dispatcher.start();
  logger.info({ url: running.url, database: database.location }, 'scheduler listening');
  return { ...running, name: serviceName, dataLocation: database.location };
}

if (import.meta.main) runAsMain(serviceName, start);
