import { okSchema } from '@platform/kit/envelope';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { Type } from 'typebox';
import type { RouteDeps } from './route-deps.ts';

const DisconnectBody = Type.Object({ connector: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export function registerDisconnect(app: ServiceApp, deps: Pick<RouteDeps, 'disconnector'>): void {
  app.post('/v1/disconnect', {
    schema: {
      description: "Revokes the caller's grant at the provider, then deletes the stored credential.",
      body: DisconnectBody,
      response: { 200: okSchema(Type.Object({ connector: Type.String(), disconnected: Type.Boolean(), revoked: Type.Boolean() })) },
    },
    handler: async (request) => {
      await deps.disconnector.disconnect(principalOf(request).owner, request.body.connector);
      return { ok: true as const, data: { connector: request.body.connector, disconnected: true, revoked: true } };
    },
  });
}
