import { okSchema } from '@platform/kit/envelope';
import { invalidRequest } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ToolInvoker, ToolOutcome } from '../tools/invoke.ts';
import { toolOutputs } from '../tools/outputs.ts';

/** The route schema of a tool's answer: what `POST /v1/<tool>` and its REST spellings answer. */
function answers(tool: string, description: string) {
  const output = toolOutputs[tool as keyof typeof toolOutputs];
  if (output === undefined) throw new Error(`the tool ${tool} declares no output schema in tools/outputs.ts`);
  return { description, response: { 200: okSchema(output) } };
}

function send(reply: FastifyReply, outcome: ToolOutcome) {
  if (outcome.ok) return reply.send({ ok: true, data: outcome.result });
  throw outcome.error;
}

/**
 * The same operations as plain JSON for clients that do not speak MCP: `POST /v1/<tool>` with the tool's arguments
 * as the body, plus REST spellings for the single-memory reads and forget. Answers use the platform envelope.
 */
export function registerJsonRoutes(app: ServiceApp, invoker: ToolInvoker, ownerOf: (request: FastifyRequest) => string): void {
  const context = (request: FastifyRequest) => ({ owner: ownerOf(request) });
  for (const tool of invoker.list()) {
    app.post(`/v1/${tool.name}`, { schema: answers(tool.name, tool.description) }, async (request, reply) =>
      send(reply, await invoker.call(tool.name, request.body ?? {}, context(request))),
    );
  }
  app.get<{ Params: { id: string } }>('/v1/memories/:id', { schema: answers('get', 'One memory, whatever its status.') }, async (request, reply) =>
    send(reply, await invoker.call('get', { id: request.params.id }, context(request))),
  );
  app.get<{ Params: { id: string } }>(
    '/v1/memories/:id/history',
    { schema: answers('history', 'The supersession chain of a memory.') },
    async (request, reply) => send(reply, await invoker.call('history', { id: request.params.id }, context(request))),
  );
  const forget = answers('forget', 'Forget a memory (?hard=true erases its content).');
  app.delete<{ Params: { id: string }; Querystring: { hard?: string; reason?: string } }>('/v1/memories/:id', { schema: forget }, async (request, reply) => {
    const { hard, reason } = request.query;
    if (hard !== undefined && hard !== 'true' && hard !== 'false') throw invalidRequest('hard must be true or false', { field: 'hard' });
    const args = { id: request.params.id, hard: hard === 'true', ...(reason === undefined ? {} : { reason }) };
    return send(reply, await invoker.call('forget', args, context(request)));
  });
}
