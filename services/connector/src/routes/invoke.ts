import { okSchema } from '@platform/kit/envelope';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { Type } from 'typebox';
import type { Invoker } from '../invoke/invoker.ts';

const InvokeBody = Type.Object(
  {
    connector: Type.String({ minLength: 1, maxLength: 64 }),
    tool: Type.String({ minLength: 1, maxLength: 64 }),
    arguments: Type.Record(Type.String(), Type.Unknown(), { description: "The tool's arguments, checked against its JSON Schema" }),
    confirm: Type.Optional(
      Type.Object(
        { tool: Type.String({ maxLength: 64 }), digest: Type.String({ pattern: '^[0-9a-f]{64}$' }) },
        { additionalProperties: false, description: 'For consequential tools: the `confirm` member of the 409 confirmation_required refusal' },
      ),
    ),
  },
  { additionalProperties: false },
);

export function registerInvoke(app: ServiceApp, deps: { invoker: Invoker }): void {
  app.post('/v1/invoke', {
    schema: {
      description: "Runs one connector tool with the caller's stored credential, behind the scope and confirmation gates.",
      body: InvokeBody,
      // The tool builds its result from named fields (scoped); the envelope around it is fixed.
      response: { 200: okSchema(Type.Object({ connector: Type.String(), tool: Type.String(), result: Type.Unknown() })) },
    },
    handler: async (request) => {
      const body = request.body;
      const result = await deps.invoker.invoke(principalOf(request).owner, body);
      return { ok: true as const, data: { connector: body.connector, tool: body.tool, result } };
    },
  });
}
