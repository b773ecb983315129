import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { asyncStrategies } from '../config.ts';
import { answers, IntentStatus, Queued } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';
import { asyncBody, intentIdParam, proseBody } from './schemas.ts';
import { statusView } from './views.ts';

/** The rail's doors: POST /messages (synchronous, single flight) and the asynchronous pair. */
export function registerMessageRoutes(app: ServiceApp, deps: RouteDeps): void {
  const { runner, book } = deps;

  app.post('/messages', {
    schema: {
      description:
        'Runs the rail on the prose and answers when the intent has ended (gates wait for their answers). 409 busy while a walk is in flight or queued.',
      body: proseBody,
      response: { 200: answers(IntentStatus) },
    },
    handler: async (request) => {
      const state = await runner.submit(request.body.prose, { via: 'messages' }, 'sync');
      const ended = (await runner.waitForEnd(state.id)) ?? state;
      return { ok: true as const, data: statusView(ended, runner) };
    },
  });

  app.post('/messages/async', {
    schema: {
      description: `Records the intent and answers its intent_id at once. While a walk is in flight: ${asyncStrategies.join(', ')} (strategy, default DAEMON_ASYNC_STRATEGY).`,
      body: asyncBody,
      response: { 202: answers(Queued) },
    },
    handler: async (request, reply) => {
      const strategy = request.body.strategy ?? deps.config.asyncStrategy;
      const state = await runner.submit(request.body.prose, { via: 'async' }, strategy);
      reply.status(202);
      return { ok: true as const, data: { intent_id: state.id, status: state.status, queue_position: runner.queuePosition(state.id) ?? null } };
    },
  });

  app.get('/messages/async/:id', {
    schema: {
      description: 'The intent’s status and result (answer, or error, reason and clarification).',
      params: intentIdParam,
      response: { 200: answers(IntentStatus) },
    },
    handler: async (request) => {
      const loaded = await book.get(request.params.id);
      if (loaded === undefined) throw new ServiceError('not_found', `no intent ${request.params.id}`);
      return { ok: true as const, data: statusView(loaded.state, runner) };
    },
  });
}
