import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { nullable, uuid } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import { normalizeInviteCode } from '../invites/invites.repository.ts';
import { authenticateOnRequest } from './authenticate.ts';
import { answers, healthResponses } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

const redemptionRefusals = {
  unknown: 'no such invite code',
  expired: 'this invite has expired',
  used_up: 'this invite has been used as many times as it allows',
} as const;

/** The router's own public routes: health, version, and an authenticated user's account and invite. */
export function registerPublicRoutes(app: ServiceApp, deps: RouteDeps): void {
  const signedIn = authenticateOnRequest(app, deps);
  // Liveness: pings the database; 503 when it is unreachable.
  app.get('/healthz', {
    schema: { description: 'Liveness: the router and its database.', response: healthResponses({ version: Type.Optional(Type.String()) }) },
    handler: async (_request, reply) => {
      const db = await deps.ping();
      if (!db)
        return reply
          .status(503)
          .send({ ok: false, data: { status: 'unavailable', db }, error: { code: 'unavailable', message: 'database unreachable', retryable: true } });
      return { ok: true as const, data: { status: 'ok', version: deps.version, db } };
    },
  });

  // The router's version (no token).
  const versionSchema = {
    description: 'The router’s version and environment provider (no token).',
    response: { 200: answers(Type.Object({ service: Type.String(), version: Type.String(), provider: Type.String() })) },
  };
  app.get('/v/version', {
    schema: versionSchema,
    handler: async () => ({ ok: true as const, data: { service: 'router', version: deps.version, provider: deps.provider.name } }),
  });

  // The caller's account: state and whether an invite was redeemed.
  app.get('/v/me', {
    onRequest: signedIn,
    schema: {
      description: 'The caller’s account: its state and whether an invite was redeemed.',
      response: {
        200: answers(
          Type.Object({
            user_id: uuid(),
            state: nullable(Type.String({ description: 'null before the account exists' })),
            invited: Type.Boolean(),
            handle: nullable(Type.String()),
          }),
        ),
      },
    },
    handler: async (request) => {
      const userId = request.routerUserId;
      const row = await deps.directory.get(userId);
      return {
        ok: true as const,
        data: {
          user_id: userId,
          state: row?.state ?? null,
          invited: row !== undefined || (await deps.invites.hasRedeemed(userId)),
          handle: row?.handle ?? null,
        },
      };
    },
  });

  app.post('/v/invites/redeem', {
    onRequest: signedIn,
    schema: {
      description: 'Redeems an invite code for the calling user (once per user); the first request after it provisions their environment.',
      body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      response: {
        200: answers(
          Type.Object({ user_id: uuid(), redeemed: Type.Literal(true), already: Type.Boolean({ description: 'This user had redeemed one before' }) }),
        ),
      },
    },
    handler: async (request) => {
      const userId = request.routerUserId;
      const code = normalizeInviteCode(request.body.code);
      const outcome = await deps.invites.redeem(code, userId);
      if (outcome === 'unknown') throw invalidRequest(redemptionRefusals.unknown, { reason: outcome });
      if (outcome === 'expired' || outcome === 'used_up') throw new ServiceError('conflict', redemptionRefusals[outcome], { details: { reason: outcome } });
      deps.directory.invalidate(userId);
      return { ok: true as const, data: { user_id: userId, redeemed: true, already: outcome === 'already_redeemed' } };
    },
  });
}
