import { createServiceApp } from '@platform/kit/http/create-app';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import type { Logger } from 'pino';
import { limits } from './limits.ts';
import { registerRoutes } from './routes/index.ts';
import type { RouteDeps } from './routes/route-deps.ts';

export const serviceName = 'daemon';
export const serviceVersion = '0.1.0';

/** The daemon's HTTP surface: PLATFORM_DAEMON_TOKEN on every route but /healthz. No listening. */
export function buildApp(deps: RouteDeps & { logger: Logger }) {
  const app = createServiceApp({ logger: deps.logger, bodyLimit: limits.bodyBytes, api: { title: serviceName, version: serviceVersion } });
  requireTransportBearer(app, { token: deps.config.token, publicPaths: ['/healthz'] });
  registerRoutes(app, deps);
  return app;
}
