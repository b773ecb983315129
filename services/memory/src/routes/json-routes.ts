import { invalidRequest } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import type { FastifyReply } from 'fastify';
import type { ToolInvoker, ToolOutcome } from '../tools/invoke.ts';

function send(reply: FastifyReply, outcome: ToolOutcome) {
  if (outcome.ok) return reply.send({ ok: true, data: outcome.result });
  throw outcome.error;
}

/**
 * The same operations as plain JSON for clients that do not speak MCP: `POST /v1/<tool>` with the tool's arguments
 * as the body, plus REST spellings for the single-memory reads and forget. Answers use the platform envelope.
 */
export function registerJsonRoutes(app: ServiceApp, invoker: ToolInvoker): void {
  for (const tool of invoker.list()) {
    app.post(`/v1/${tool.name}`, async (request, reply) => send(reply, await invoker.call(tool.name, request.body ?? {})));
  }
  app.get<{ Params: { id: string } }>('/v1/memories/:id', async (request, reply) => send(reply, await invoker.call('get', { id: request.params.id })));
  app.get<{ Params: { id: string } }>('/v1/memories/:id/history', async (request, reply) =>
    send(reply, await invoker.call('history', { id: request.params.id })),
  );
  app.delete<{ Params: { id: string }; Querystring: { hard?: string; reason?: string } }>('/v1/memories/:id', async (request, reply) => {
    const { hard, reason } = request.query;
    if (hard !== undefined && hard !== 'true' && hard !== 'false') throw invalidRequest('hard must be true or false', { field: 'hard' });
    return send(reply, await invoker.call('forget', { id: request.params.id, hard: hard === 'true', ...(reason === undefined ? {} : { reason }) }));
  });
}
