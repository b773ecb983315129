import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { oneOf } from '@platform/kit/wire-schemas';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../http/openai-errors.ts';
import { formatCredit, maxCreditUnits, parseDecimal12 } from '../metering/credit.ts';
import { actorInput, adminRoute, Credit } from './admin-inputs.ts';
import type { RouteDeps } from './route-deps.ts';

const ActorParams = Type.Object({ actor: Type.String({ maxLength: 256 }) });
const CapView = Type.Object({
  actor: Type.String(),
  limit_credit: Credit,
  source: oneOf(['default', 'override']),
});
const response = { 200: CapView };

/** Per-actor daily caps: read, override (0 blocks the actor at once), or return to the default. */
export function registerAdminCapRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const view = async (actor: string) => {
    const override = await deps.operator.capOverride(actor);
    return { actor, limit_credit: formatCredit(override ?? deps.defaultCapUnits), source: override === undefined ? 'default' : 'override' };
  };

  app.get('/admin/actors/:actor/cap', {
    ...adminRoute,
    schema: { description: "The actor's daily cap and whether it is an override.", params: ActorParams, response },
    handler: async (request) => view(actorInput(request.params.actor, 'actor')),
  });

  app.put('/admin/actors/:actor/cap', {
    ...adminRoute,
    schema: {
      description: "Sets the actor's daily cap in credits; it applies to the next reservation, today's spend included. 0 blocks.",
      params: ActorParams,
      body: Type.Object({ limit_credit: Type.String({ maxLength: 40 }) }, { additionalProperties: false }),
      response,
    },
    handler: async (request) => {
      const actor = actorInput(request.params.actor, 'actor');
      const parsed = parseDecimal12(request.body.limit_credit, 'limit_credit', maxCreditUnits);
      if (!parsed.ok) throw badRequest('invalid_limit', parsed.reason, 'limit_credit');
      await deps.operator.setCap(actor, parsed.value);
      deps.capChanged(actor);
      request.log.info({ actor, limit_credit: formatCredit(parsed.value) }, 'daily cap set');
      return view(actor);
    },
  });

  app.delete('/admin/actors/:actor/cap', {
    ...adminRoute,
    schema: { description: 'Removes the override: the actor is back on GATEWAY_DAILY_CAP_CREDIT.', params: ActorParams, response },
    handler: async (request) => {
      const actor = actorInput(request.params.actor, 'actor');
      await deps.operator.removeCap(actor);
      deps.capChanged(actor);
      return view(actor);
    },
  });
}
