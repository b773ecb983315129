import { NonceStore } from '@platform/kit/auth/nonce-store';
import { createServiceApp, type ObservabilityDeps, observabilityOptions } from '@platform/kit/http/create-app';
import { registerHandshakeRoutes } from '@platform/kit/http/handshake-routes';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import { rateLimit } from '@platform/kit/http/rate-limit';
import { routeOf } from '@platform/kit/http/route-of';
import { requireCaller } from './http/caller-auth.ts';
import { marketplaceFailureEnvelope } from './http/errors.ts';
import { documentDeveloperSecurity } from './http/route-security.ts';
import { limits } from './limits.ts';
import { registerRoutes } from './routes/index.ts';
import type { RouteDeps } from './routes/route-deps.ts';

export const serviceName = 'marketplace';
export const serviceVersion = '0.1.0';

/** The routes callers reach with their caller token (the bearer identifies; signatures authorise spend). */
export const callerRoutePrefixes = ['/v1/quote/', '/v1/invoke/', '/v1/invocations/', '/v1/receipts/', '/v1/channels', '/v1/vouchers/', '/v1/streams'];

const authRoutes = new Set(['/v1/developers/nonce', '/v1/developers/auth', '/v1/agent/auth/challenge', '/v1/agent/auth/verify']);

export interface AppDeps extends ObservabilityDeps, RouteDeps {
  ping: () => Promise<boolean>;
}

/** The marketplace's HTTP surface. No listening, no environment: everything arrives in `deps`. */
export function buildApp(deps: AppDeps) {
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: limits.bodyBytes,
    trustProxy: deps.config.trustProxy,
    failureEnvelope: marketplaceFailureEnvelope,
    api: { title: serviceName, version: serviceVersion },
    ...observabilityOptions(deps),
  });
  // First: the public routes that write a nonce row per call are limited per address before anything else runs.
  rateLimit(app, {
    classes: { auth: deps.config.authRate },
    classify: (request) => (authRoutes.has(routeOf(request).url ?? '') ? 'auth' : undefined),
    clock: deps.clock,
  });
  requireCaller(app, { tokenKey: deps.tokenKey, clock: deps.clock, prefixes: callerRoutePrefixes });
  documentDeveloperSecurity(app);
  registerHealthRoutes(app, { service: serviceName, version: serviceVersion, ping: deps.ping });
  registerHandshakeRoutes(app, { service: serviceName, nonces: new NonceStore(deps.db, deps.clock), tokenKey: deps.tokenKey, clock: deps.clock });
  registerRoutes(app, deps);
  return app;
}
