import { okSchema } from '@platform/kit/envelope';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { Type } from 'typebox';
import type { RouteDeps } from './route-deps.ts';

// The response schema is the allow-list: fast-json-stringify drops any member not named here, so even a
// credential that found its way into the data could not be serialised.
const ConnectionView = Type.Object({
  id: Type.String(),
  connector: Type.String(),
  status: Type.Union([Type.Literal('connected'), Type.Literal('needs_reconnect')]),
  scopes: Type.Array(Type.String(), { description: 'Scopes the provider granted' }),
  connected_at: Type.String({ description: 'ISO 8601' }),
  updated_at: Type.String({ description: 'ISO 8601' }),
});

export function registerListConnections(app: ServiceApp, deps: RouteDeps): void {
  app.get('/v1/connections', {
    schema: {
      description: "The caller's connections and the scopes each was granted; never a token.",
      response: { 200: okSchema(Type.Object({ connections: Type.Array(ConnectionView) })) },
    },
    handler: async (request) => {
      const rows = await deps.connections.listOwned(principalOf(request).owner);
      const connections = rows.map((row) => ({
        id: row.id,
        connector: row.connector,
        status: row.status,
        scopes: row.scopes,
        connected_at: row.createdAt.toISOString(),
        updated_at: row.updatedAt.toISOString(),
      }));
      return { ok: true as const, data: { connections } };
    },
  });
}
