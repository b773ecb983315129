import type { FastifyInstance } from 'fastify';
import { registerAdminCapRoutes } from './admin-caps.ts';
import { registerAdminReadRoutes } from './admin-reads.ts';
import { registerCompletionRoutes } from './completions.ts';
import { registerModelsRoute } from './models.ts';
import type { RouteDeps } from './route-deps.ts';

/** Every route under /v1: the metered proxy and the models list (gateway bearer), the operator routes (admin bearer). */
export function registerGatewayRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  registerCompletionRoutes(scope, deps);
  registerModelsRoute(scope, deps);
  registerAdminCapRoutes(scope, deps);
  registerAdminReadRoutes(scope, deps);
}
