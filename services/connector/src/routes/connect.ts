import { okSchema } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { Type } from 'typebox';
import { principalHeader } from '../principal-header.ts';
import type { RouteDeps } from './route-deps.ts';

const ConnectBody = Type.Object(
  { connector: Type.String({ minLength: 1, maxLength: 64, description: 'A connector id from GET /v1/connectors' }) },
  { additionalProperties: false },
);

export function registerConnect(app: ServiceApp, deps: Pick<RouteDeps, 'connectFlow'>): void {
  app.post('/v1/connect', {
    schema: {
      description: "Begins an OAuth authorization-code flow (PKCE) for the caller's user; the user opens `authorization_url` in a browser.",
      body: ConnectBody,
      response: {
        200: okSchema(
          Type.Object({
            connector: Type.String(),
            authorization_url: Type.String({ description: "The provider's consent page; single use, valid until expires_at" }),
            expires_at: Type.String({ description: 'ISO 8601: the flow must be finished before' }),
          }),
        ),
      },
    },
    // `/v1/connect` is a principal path listed as exact (a prefix would catch /v1/connectors and the callback):
    // the kit checks a token given there; this makes one required, still before the body is read.
    onRequest: async (request) => {
      if (!request.principal) throw new ServiceError('unauthorized', `missing principal token (${principalHeader} header)`);
    },
    handler: async (request) => {
      const begun = await deps.connectFlow.begin(principalOf(request).owner, request.body.connector);
      return {
        ok: true as const,
        data: { connector: request.body.connector, authorization_url: begun.authorizationUrl, expires_at: begun.expiresAt.toISOString() },
      };
    },
  });
}
