import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { oneOf } from '@platform/kit/wire-schemas';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requireOwnActor } from '../http/gateway-auth.ts';
import { badRequest } from '../http/openai-errors.ts';
import { actorRule, ledgerActor } from '../http/platform-headers.ts';
import { formatCredit } from '../metering/credit.ts';
import { Credit, DayText, dayInput } from './admin-inputs.ts';
import type { RouteDeps } from './route-deps.ts';

/** Days and intents in one answer: a quarter of days, the costliest intents. */
const maxDays = 92;
const maxIntents = 50;

const Usage = Type.Object({
  object: oneOf(['usage']),
  actor: Type.String({ description: 'The ledger actor the spend is booked to' }),
  days: Type.Array(Type.Object({ day: DayText, spent_credit: Credit, limit_credit: Credit, calls: Type.Integer() }), { description: 'Newest day first' }),
  intents: Type.Array(
    Type.Object({ intent_id: Type.String(), calls: Type.Integer(), input_tokens: Type.Integer(), output_tokens: Type.Integer(), cost_credit: Credit }),
    { description: 'The costliest intents of the range' },
  ),
});

/**
 * `GET /v1/usage`: the calling actor's own spend (`X-Platform-Actor-DID`, as on every metered call): per UTC day
 * (spent, cap, calls) and per intent (cost, calls, tokens), for the console's spend view through the user's daemon.
 * The root gateway bearer already lets its holder spend as any actor, so reading that actor's spend grants nothing
 * more; a daemon's owner token reads only its own user's (403 otherwise); through the router's `/gw` the actor is
 * always the signed-in user's own.
 */
export function registerUsageRoute(scope: FastifyInstance, deps: RouteDeps): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/usage', {
    schema: {
      description: 'The calling actor’s spend per UTC day and per intent, newest day first; `from`/`to` bound the days (inclusive).',
      querystring: Type.Object({ from: Type.Optional(DayText), to: Type.Optional(DayText) }, { additionalProperties: false }),
      response: { 200: Usage },
    },
    handler: async (request) => {
      const header = request.headers['x-platform-actor-did'];
      const actor = typeof header === 'string' ? ledgerActor(header) : undefined;
      if (actor === undefined) throw badRequest('invalid_actor', `X-Platform-Actor-DID must be ${actorRule}`, 'X-Platform-Actor-DID');
      requireOwnActor(request, actor);
      const range = { actor, from: dayInput(request.query.from, 'from'), to: dayInput(request.query.to, 'to') };
      const [days, intents] = await Promise.all([deps.operator.spend(range, deps.defaultCapUnits, maxDays), deps.operator.rollup('intent', range, maxIntents)]);
      return {
        object: 'usage',
        actor,
        days: days.map((row) => ({ day: row.day, spent_credit: formatCredit(row.spentUnits), limit_credit: formatCredit(row.limitUnits), calls: row.calls })),
        intents: intents.map((row) => ({
          intent_id: row.key,
          calls: row.calls,
          input_tokens: row.inputTokens,
          output_tokens: row.outputTokens,
          cost_credit: formatCredit(row.costUnits),
        })),
      };
    },
  });
}
