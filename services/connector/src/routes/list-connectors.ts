import { okSchema } from '@platform/kit/envelope';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import type { RouteDeps } from './route-deps.ts';

const ToolView = Type.Object({
  name: Type.String(),
  description: Type.String(),
  scope: Type.String(),
  consequential: Type.Boolean({ description: 'Acts outside the account: a call needs an explicit confirmation' }),
  arguments: Type.Unknown({ description: 'JSON Schema of the arguments' }),
});

const ConnectorView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  scopes: Type.Array(Type.Object({ id: Type.String(), description: Type.String() })),
  tools: Type.Array(ToolView),
});

export function registerListConnectors(app: ServiceApp, deps: RouteDeps): void {
  app.get('/v1/connectors', {
    schema: {
      description: 'The connector catalogue: each connector with its scopes and tools. The same for every caller.',
      response: { 200: okSchema(Type.Object({ connectors: Type.Array(ConnectorView) })) },
    },
    handler: async () => {
      const connectors = deps.connectors.map((connector) => ({
        id: connector.id,
        name: connector.name,
        description: connector.description,
        scopes: connector.scopes.map((scope) => ({ ...scope })),
        // Named fields: a tool also carries its code (`run`, `describe`), which is not data.
        tools: connector.tools.map(({ name, description, scope, consequential, arguments: args }) => ({
          name,
          description,
          scope,
          consequential,
          arguments: args,
        })),
      }));
      return { ok: true as const, data: { connectors } };
    },
  });
}
