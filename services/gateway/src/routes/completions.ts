import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ChatBody, EmbeddingBody } from '../calls/request-bodies.ts';
import { checkCallerHeaders } from '../http/platform-headers.ts';
import type { RouteDeps } from './route-deps.ts';

/** The OpenAI-compatible, metered routes. Their answers are the upstream's, byte for byte. */
export function registerCompletionRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/chat/completions', {
    schema: { description: 'Chat completion, metered; `stream: true` answers with server-sent events.', body: ChatBody },
    onRequest: checkCallerHeaders,
    handler: async (request, reply) => {
      await deps.calls.chat(request, reply);
      return reply;
    },
  });
  app.post('/embeddings', {
    schema: { description: 'Embeddings, metered on input tokens only.', body: EmbeddingBody },
    onRequest: checkCallerHeaders,
    handler: async (request, reply) => {
      await deps.calls.embeddings(request, reply);
      return reply;
    },
  });
}
