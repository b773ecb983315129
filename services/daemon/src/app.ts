import { createServiceApp } from '@platform/kit/http/create-app';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import type { Logger } from 'pino';
import { compileSchemasOnFirstUse } from './lazy-schemas.ts';
import { limits } from './limits.ts';
import { registerRoutes } from './routes/index.ts';
import type { RouteDeps } from './routes/route-deps.ts';

export const serviceName = 'daemon';
export const serviceVersion = '0.1.0';

/**
 * The daemon's HTTP surface: PLATFORM_DAEMON_TOKEN on every route but /healthz. No listening. Each route's schemas
 * compile on its first request (`schemas.compileAll()` compiles the rest): an idle daemon stays small.
 */
export function buildApp(deps: RouteDeps & { logger: Logger }) {
  const app = createServiceApp({ logger: deps.logger, bodyLimit: limits.bodyBytes, api: { title: serviceName, version: serviceVersion } });
  const schemas = compileSchemasOnFirstUse(app);
  requireTransportBearer(app, { token: deps.config.token, publicPaths: ['/healthz'] });
  registerRoutes(app, deps);
  return { app, schemas };
}
