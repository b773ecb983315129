import { createServiceApp } from '@platform/kit/http/create-app';
import { declareRequestHeader } from '@platform/kit/http/openapi';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import type { ServiceTracing } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import { compileSchemasOnFirstUse } from './lazy-schemas.ts';
import { limits } from './limits.ts';
import { registerRoutes } from './routes/index.ts';
import type { RouteDeps } from './routes/route-deps.ts';

export const serviceName = 'daemon';
export const serviceVersion = '0.1.0';

/**
 * The daemon's HTTP surface: PLATFORM_DAEMON_TOKEN on every route but /healthz and /metrics (PLATFORM_METRICS_TOKEN,
 * its own). No listening. Each route's schemas compile on its first request (`schemas.compileAll()` compiles the
 * rest): an idle daemon stays small.
 */
export function buildApp(deps: RouteDeps & { logger: Logger; metrics: ServiceMetrics; tracing?: ServiceTracing }) {
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: limits.bodyBytes,
    api: { title: serviceName, version: serviceVersion },
    metrics: deps.metrics,
    metricsToken: deps.config.metricsToken,
    ...(deps.tracing && { tracing: deps.tracing }),
  });
  const schemas = compileSchemasOnFirstUse(app);
  requireTransportBearer(app, { token: deps.config.token, publicPaths: ['/healthz'] });
  // Headers two routes read in their own code (their refusals name them), in the API description.
  declareRequestHeader(
    app,
    'idempotency-key',
    { description: 'The wake’s key (<alarm_id>:<scheduled_for>): a repeat is acknowledged and dropped', maxLength: 256 },
    (route) => route.url === '/wake',
  );
  declareRequestHeader(
    app,
    'last-event-id',
    { description: 'The id of the last event seen: the stream resumes after it', maxLength: 64 },
    (route) => route.url === '/events',
  );
  registerRoutes(app, deps);
  return { app, schemas };
}
