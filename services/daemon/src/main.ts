import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { serviceName } from './app.ts';
import { composeDaemon } from './compose.ts';
import { loadConfig } from './config.ts';

/**
 * Starts the daemon from an environment map: one user, its identity, its journal, the rail, HTTP. With
 * `handleSignals` (the process is the daemon's own) POST /shutdown and SIGTERM drain and exit the process; under
 * `platform up` they stop the daemon alone.
 */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  const ownsProcess = options.handleSignals ?? true;
  const tracing = await startTracing(env, serviceName);
  let stop: () => Promise<void> = async () => {};
  const daemon = await composeDaemon(config, {
    clock: systemClock,
    logger,
    metrics: createServiceMetrics(serviceName),
    tracing,
    requestShutdown: () => {
      logger.info('shutdown requested: draining');
      void stop().then(() => {
        if (ownsProcess) process.exit(0);
      });
    },
  });
  if (config.token === '') logger.warn('PLATFORM_DAEMON_TOKEN is empty: anyone who can reach the port can act as this user');
  const running = await serve(daemon.app, {
    host: config.host,
    port: config.port,
    logger,
    handleSignals: ownsProcess,
    shutdownSteps: [() => daemon.release()],
    tracing,
  });
  stop = running.stop;
  const begun = await daemon.begin();
  // The router starts one daemon per user, so idle memory counts: with --expose-gc (the bundle's launch flags), one
  // full collection after start returns the startup garbage (module compilation, schema building) to the system.
  (globalThis as { gc?: () => void }).gc?.();
  logger.info({ url: running.url, did: daemon.identity.did, key: daemon.identity.keySource, intents: daemon.book.count, ...begun }, 'daemon listening');
  return { ...running, name: serviceName, dataLocation: `files in ${config.dataDir}` };
}

if (import.meta.main) runAsMain(serviceName, start);
