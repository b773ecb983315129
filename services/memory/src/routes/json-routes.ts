import { okSchema } from '@platform/kit/envelope';
import { invalidRequest } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { validatedByHandler } from '@platform/kit/wire-schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
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
    // The body is the tool's arguments, checked by the tool (its refusals name fields as MCP callers see them).
    const schema = { ...answers(tool.name, tool.description), body: validatedByHandler(tool.input) };
    app.post(`/v1/${tool.name}`, { schema }, async (request, reply) => {
      // MCP's arguments may be left out (null); this body may not: null is not the tool's arguments.
      if (request.body === null) throw invalidRequest('the body must be a JSON object: the tool’s arguments');
      return send(reply, await invoker.call(tool.name, request.body, context(request)));
    });
  }
  const params = Type.Object({ id: Type.String({ maxLength: 64, description: 'The memory id (a UUID)' }) });
  app.get<{ Params: { id: string } }>(
    '/v1/memories/:id',
    { schema: { ...answers('get', 'One memory, whatever its status.'), params } },
    async (request, reply) => send(reply, await invoker.call('get', { id: request.params.id }, context(request))),
  );
  app.get<{ Params: { id: string } }>(
    '/v1/memories/:id/history',
    { schema: { ...answers('history', 'The supersession chain of a memory.'), params } },
    async (request, reply) => send(reply, await invoker.call('history', { id: request.params.id }, context(request))),
  );
  const forget = { ...answers('forget', 'Forget a memory (?hard=true erases its content).'), params };
  app.delete<{ Params: { id: string }; Querystring: { hard?: string; reason?: string } }>('/v1/memories/:id', { schema: forget }, async (request, reply) => {
    const { hard, reason } = request.query;
    if (hard !== undefined && hard !== 'true' && hard !== 'false') throw invalidRequest('hard must be true or false', { field: 'hard' });
    const args = { id: request.params.id, hard: hard === 'true', ...(reason === undefined ? {} : { reason }) };
    return send(reply, await invoker.call('forget', args, context(request)));
  });
}
