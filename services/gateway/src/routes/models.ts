import type { FastifyInstance } from 'fastify';
import { type Slot, slots } from '../models/model-policy.ts';
import type { RouteDeps } from './route-deps.ts';

/**
 * `GET /v1/models` in OpenAI's list shape, for clients that look before they call: the models the newest rate card
 * prices, narrowed to a slot's free-tier models when `X-Platform-Slot` is sent.
 */
export function registerModelsRoute(scope: FastifyInstance, deps: RouteDeps): void {
  scope.get('/models', {
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
