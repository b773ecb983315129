import { createServiceApp } from '@platform/kit/http/create-app';
import { apiDocsPaths, documentSecurity } from '@platform/kit/http/openapi';
import { corsHeaders } from './http/cors.ts';
import { registerAdminRoutes } from './routes/admin-routes.ts';
import { registerConsoleRoutes } from './routes/console-routes.ts';
import { registerDaemonMetricsRoute } from './routes/daemon-metrics-route.ts';
import { registerInternalHealth } from './routes/internal-routes.ts';
import { registerProxyRoute } from './routes/proxy-route.ts';
import { registerPublicRoutes } from './routes/public-routes.ts';
import type { RouteDeps } from './routes/route-deps.ts';
import { registerWakeRoute } from './routes/wake-route.ts';

export const serviceName = 'router';
export const serviceVersion = '0.1.0';

/** The router's own JSON bodies are small; proxied bodies stream through without this limit (the daemon has its own). */
const ownBodyBytes = 64 * 1024;

/** The public routes that need no token: health, version, the console's files and the API description. */
const openPaths = new Set(['/healthz', '/v/version', '/console', ...apiDocsPaths]);

function signedInRoute(url: string): boolean {
  return !openPaths.has(url) && !url.startsWith('/console/');
}

/** The public listener: health, version, the caller's account and invite, the console's page, and everything else proxied. */
export async function buildPublicApp(deps: RouteDeps) {
  // Counted into the router's one registry, served only on the internal listener: here `/metrics` is a daemon's path.
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: ownBodyBytes,
    api: { title: `${serviceName} (public)`, version: serviceVersion },
    metrics: deps.serviceMetrics,
    countRequests: deps.config.metricsToken !== '',
    tracing: deps.tracing,
  });
  // A callback hook: on the proxy's path an async one costs a promise and a microtask a request.
  app.addHook('onRequest', (request, reply, done) => {
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    reply.headers(corsHeaders(deps.config.corsOrigins, request.headers, preflight));
    // Answered here: a hook that sends its reply does not call done.
    if (preflight) reply.status(204).send();
    else done();
  });
  // Before the routes, so each is described with the credential it checks.
  documentSecurity(
    app,
    'identityProviderJwt',
    { type: 'http', scheme: 'bearer', description: 'The identity provider’s JWT for the user (IDP_URL).' },
    (route) => (signedInRoute(route.url ?? '') ? 'required' : false),
  );
  registerPublicRoutes(app, deps);
  registerConsoleRoutes(app, deps);
  await registerProxyRoute(app, deps);
  return app;
}

/**
 * The internal listener (a private address): health, the admin and wake routes when their tokens are set, and with
 * PLATFORM_METRICS_TOKEN the router's `/metrics` and its daemons' summed (`/metrics/daemons`).
 */
export async function buildInternalApp(deps: RouteDeps) {
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: ownBodyBytes,
    api: { title: `${serviceName} (internal)`, version: serviceVersion },
    metrics: deps.serviceMetrics,
    metricsToken: deps.config.metricsToken,
    tracing: deps.tracing,
  });
  registerInternalHealth(app, deps);
  registerDaemonMetricsRoute(app, deps);
  if (deps.config.adminToken !== '') await registerAdminRoutes(app, deps);
  if (deps.config.wakeToken !== '') await registerWakeRoute(app, deps);
  return app;
}
