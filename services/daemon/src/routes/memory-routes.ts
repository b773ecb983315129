import { ServiceCallError } from '@platform/client/service-session';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { tracedFetch } from '@platform/kit/observability/tracing';
import { Type } from 'typebox';
import { answers, Forgotten, Memories } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';
import { asAgent, notConfigured } from './service-calls.ts';

/**
 * The agent's memories for the console: search and forget, on the memory server's JSON routes with the daemon's
 * bearer, in the scope the agent's own recall and remember use (the default one).
 */
export function registerMemoryRoutes(app: ServiceApp, deps: RouteDeps): void {
  const call = async (method: string, path: string, body?: unknown) => {
    const memory = deps.config.memory;
    if (memory === undefined) throw notConfigured('memory server', 'PLATFORM_MEMORY_URL');
    const headers: Record<string, string> = {};
    if (memory.token !== '') headers.authorization = `Bearer ${memory.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return asAgent('the memory server', async () => {
      const response = await tracedFetch(`${memory.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      const answer = (await response.json().catch(() => undefined)) as
        | { ok?: boolean; data?: unknown; error?: { code?: string; message?: string } }
        | undefined;
      if (!response.ok || answer?.ok !== true)
        throw new ServiceCallError(response.status, answer?.error?.code ?? 'internal', answer?.error?.message ?? `answered ${response.status}`);
      return answer.data;
    });
  };

  app.get('/memories', {
    schema: {
      description: 'The agent’s memories, best match first for `query` (newest first without one): the memory server’s search.',
      querystring: Type.Object({
        query: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
      }),
      response: { 200: answers(Memories) },
    },
    handler: async (request) => ({ ok: true as const, data: await call('POST', '/v1/search', { ...request.query, limit: request.query.limit ?? 30 }) }),
  });

  app.delete('/memories/:id', {
    schema: {
      description: 'Forgets one memory (kept as forgotten, never recalled again).',
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
      response: { 200: answers(Forgotten) },
    },
    handler: async (request) => ({
      ok: true as const,
      data: await call('POST', '/v1/forget', { id: request.params.id, reason: 'forgotten from the console' }),
    }),
  });
}
