import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import { defaultConversation } from '../chat/chat-service.ts';
import { limits } from '../limits.ts';
import { answers, ChatTurn, Conversations, Transcript } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';
import { chatBody, conversationId } from './schemas.ts';

/** POST /chat and the transcripts it writes. */
export function registerChatRoutes(app: ServiceApp, deps: RouteDeps): void {
  app.post('/chat', {
    schema: {
      description:
        'One conversational turn: memories are recalled, the executor model answers, a request to act becomes an intent (its id is in intent_id), durable facts are remembered.',
      body: chatBody,
      response: { 200: answers(ChatTurn) },
    },
    handler: async (request) => {
      if (deps.runner.draining) throw new ServiceError('unavailable', 'the daemon is shutting down');
      return {
        ok: true as const,
        data: await deps.chat.turn({ message: request.body.message, conversationId: request.body.conversation_id ?? defaultConversation }),
      };
    },
  });

  // Every conversation, newest first.
  app.get('/conversations', {
    schema: { description: 'Every conversation, newest first.', response: { 200: answers(Conversations) } },
    handler: async () => ({ ok: true as const, data: { conversations: await deps.transcripts.list() } }),
  });

  app.get('/conversations/:id', {
    schema: {
      description:
        'A conversation’s transcript, oldest first: user messages, say, status and notice entries. One that does not exist yet is empty (no entries), not a 404.',
      params: Type.Object({ id: conversationId }),
      querystring: Type.Object({
        after: Type.Optional(Type.Integer({ minimum: 0, description: 'Only entries after this seq' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.pageSize, default: 100 })),
      }),
      response: { 200: answers(Transcript) },
    },
    handler: async (request) => {
      const entries = await deps.transcripts.read(request.params.id, { after: request.query.after ?? 0, limit: request.query.limit ?? 100 });
      // A new user's first page asks for `default` before anything was said: a conversation not begun is an empty one.
      return { ok: true as const, data: { conversation_id: request.params.id, entries: entries ?? [] } };
    },
  });
}
