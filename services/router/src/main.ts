import { fileURLToPath } from 'node:url';
import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { openDatabase } from '@platform/kit/db/open-database';
import { runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import { serviceName } from './app.ts';
import { composeRouter } from './compose.ts';
import { loadConfig } from './config.ts';
import type { RouterSchema } from './db/schema.ts';

/** The daemon the `process` provider starts: its bundle, with the flags its README gives for a small idle footprint. */
export const daemonLaunch = {
  daemonEntry: fileURLToPath(new URL('../../daemon/dist/main.js', import.meta.url)),
  nodeFlags: ['--max-semi-space-size=1', '--expose-gc'],
  // The console's built page (`npm install` builds it), served at /console/.
  consoleDir: fileURLToPath(new URL('../../../web/console/dist', import.meta.url)),
};

/** Starts the router: the database, both listeners, the idle reaper. Stopping stops the daemons it started. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env, daemonLaunch);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  if (config.identityProvider === undefined) logger.warn('IDP_URL is not set: every authenticated route answers 503 until an identity provider is configured');
  // Every daemon gets a bearer derived from this root; in development it is generated once into DATA_DIR.
  const root = secretFromSettingOrFile(config.daemonTokenRoot, config.dataDir, 'daemon-token-root.key', 'PLATFORM_DAEMON_TOKEN');
  const metrics = createServiceMetrics(serviceName);
  const tracing = await startTracing(env, serviceName);
  const database = await openDatabase<RouterSchema>({ url: config.databaseUrl, dataDir: `${config.dataDir}/db`, schema: serviceName, logger, metrics });
  const router = await composeRouter(database, config, { clock: systemClock, logger, daemonTokenRoot: root.hex, metrics, tracing });
  const running = await serve(router.publicApp, {
    host: config.publicAddress.host,
    port: config.publicAddress.port,
    logger,
    handleSignals: options.handleSignals ?? true,
    shutdownSteps: [() => router.internalApp.close(), () => router.release(), () => database.close()],
    tracing,
  });
  // After the public listener, so the first "listening" line a supervisor reads is the public address.
  await router.internalApp.listen({ host: config.internalAddress.host, port: config.internalAddress.port });
  router.reaper.start();
  const internal = router.internalApp.server.address();
  const internalUrl =
    typeof internal === 'object' && internal ? `http://${internal.family === 'IPv6' ? `[${internal.address}]` : internal.address}:${internal.port}` : '';
  logger.info(
    {
      url: running.url,
      internal: internalUrl,
      provider: router.deps.provider.name,
      database: database.location,
    },
    'router listening',
  );
  // `platform up` reaches the admin routes there (the development user's invite).
  return { ...running, name: serviceName, dataLocation: database.location, links: { internalUrl } };
}

if (import.meta.main) runAsMain(serviceName, start);
