import type { FastifyInstance } from 'fastify';
import { registerAdminCapRoutes } from './admin-caps.ts';
import { registerAdminReadRoutes } from './admin-reads.ts';
import { registerCompletionRoutes } from './completions.ts';
import { registerModelsRoute } from './models.ts';
import type { RouteDeps } from './route-deps.ts';
import { registerUsageRoute } from './usage.ts';

/** Every route under /v1: the metered proxy, the models list and the caller's own usage (gateway bearer), the operator routes (admin bearer). */
export function registerGatewayRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  registerCompletionRoutes(scope, deps);
  registerModelsRoute(scope, deps);
  registerUsageRoute(scope, deps);
  registerAdminCapRoutes(scope, deps);
  registerAdminReadRoutes(scope, deps);
}
