import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { openObject } from '@platform/kit/wire-schemas';
import type { FastifyInstance } from 'fastify';
import { type TProperties, Type } from 'typebox';
import { ChatBody, EmbeddingBody } from '../calls/request-bodies.ts';
import { checkCallerHeaders } from '../http/platform-headers.ts';
import type { RouteDeps } from './route-deps.ts';

// The answers are the upstream's bytes, sent as they came (never through a serialiser): the members named here are
// OpenAI's, and whatever else the provider adds is passed on.
const upstreamJson = <T extends TProperties>(description: string, members: T) => Type.Object(members, { additionalProperties: true, description });
const usage = Type.Optional(openObject('prompt_tokens, completion_tokens, total_tokens: what the call was charged for'));
const ChatCompletion = upstreamJson('The upstream’s chat.completion', {
  id: Type.String(),
  object: Type.String({ description: 'chat.completion' }),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(openObject('index, message, finish_reason')),
  usage,
});
const Embeddings = upstreamJson('The upstream’s embedding list', {
  object: Type.String({ description: 'list' }),
  data: Type.Array(openObject('index, embedding')),
  model: Type.String(),
  usage,
});

/** The OpenAI-compatible, metered routes. Their answers are the upstream's, byte for byte. */
export function registerCompletionRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/chat/completions', {
    schema: {
      description: 'Chat completion, metered; `stream: true` answers with server-sent events.',
      body: ChatBody,
      response: {
        200: {
          description: 'The upstream’s answer; with `stream: true`, its chunks as SSE ending with `data: [DONE]`',
          content: { 'application/json': { schema: ChatCompletion }, 'text/event-stream': { schema: Type.String() } },
        },
      },
    },
    onRequest: checkCallerHeaders,
    handler: async (request, reply) => {
      await deps.calls.chat(request, reply);
      return reply;
    },
  });
  app.post('/embeddings', {
    schema: { description: 'Embeddings, metered on input tokens only.', body: EmbeddingBody, response: { 200: Embeddings } },
    onRequest: checkCallerHeaders,
    handler: async (request, reply) => {
      await deps.calls.embeddings(request, reply);
      return reply;
    },
  });
}
