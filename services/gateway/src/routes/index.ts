import type { FastifyInstance } from 'fastify';
import type { GatewayCalls } from '../calls/gateway-calls.ts';
import type { ModelPolicy } from '../models/model-policy.ts';
import type { OperatorRepository } from '../operator/operator.repository.ts';
import type { RateCardBook } from '../rate-cards/rate-card-book.ts';
import { registerAdminCapRoutes } from './admin-caps.ts';
import { registerAdminReadRoutes } from './admin-reads.ts';
import { registerCompletionRoutes } from './completions.ts';
import { registerModelsRoute } from './models.ts';

export interface RouteDeps {
  calls: GatewayCalls;
  operator: OperatorRepository;
  book: RateCardBook;
  policy: ModelPolicy;
  defaultCapUnits: bigint;
}

/** Every route under /v1: the metered proxy and the models list (gateway bearer), the operator routes (admin bearer). */
export function registerGatewayRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  registerCompletionRoutes(scope, deps);
  registerModelsRoute(scope, deps);
  registerAdminCapRoutes(scope, deps);
  registerAdminReadRoutes(scope, deps);
}
