import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { oneOf } from '@platform/kit/wire-schemas';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { type Slot, slots } from '../models/model-policy.ts';
import type { RouteDeps } from './route-deps.ts';

/**
 * `GET /v1/models` in OpenAI's list shape, for clients that look before they call: the models the newest rate card
 * prices, narrowed to a slot's free-tier models when `X-Platform-Slot` is sent.
 */
const ModelList = Type.Object({
  object: oneOf(['list']),
  data: Type.Array(
    Type.Object({
      id: Type.String({ description: 'accounts/<provider>/models/<model>' }),
      object: oneOf(['model']),
      created: Type.Integer({ description: 'Always 0: the gateway does not know when a provider made it' }),
      owned_by: Type.String({ description: 'The provider' }),
      rate_table_v: Type.Integer({ description: 'The rate card that prices it' }),
    }),
  ),
});

export function registerModelsRoute(scope: FastifyInstance, deps: RouteDeps): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get('/models', {
    schema: { description: 'The models the newest rate card prices (a slot’s free-tier models with X-Platform-Slot).', response: { 200: ModelList } },
    handler: async (request) => {
      const card = deps.book.current();
      const slot = request.headers['x-platform-slot'];
      const ids = (slots as readonly unknown[]).includes(slot)
        ? deps.policy.chatModelsFor(slot as Slot).filter((id) => card.prices.has(id))
        : [...card.prices.keys()];
      return {
        object: 'list',
        data: ids.map((id) => ({ id, object: 'model', created: 0, owned_by: id.split('/')[1] ?? 'unknown', rate_table_v: card.version })),
      };
    },
  });
}
