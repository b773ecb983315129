import { anyActor, mayActAs } from '@platform/kit/auth/owner-actor';
import type { OwnerTokens } from '@platform/kit/auth/owner-token';
import { safeEqual } from '@platform/kit/auth/safe-equal';
import { documentSecurity } from '@platform/kit/http/openapi';
import { routeOf } from '@platform/kit/http/route-of';
import { bearerFrom } from '@platform/kit/http/transport-bearer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from './openai-errors.ts';

/** Which bearer a route takes: the gateway token (chat, embeddings, models) or the operator's admin token. */
export type RouteAccess = 'gateway' | 'admin';

export function routeAccess(request: FastifyRequest): RouteAccess {
  return accessOf(routeOf(request).config);
}

function accessOf(config: unknown): RouteAccess {
  return (config as { access?: RouteAccess } | undefined)?.access ?? 'gateway';
}

/**
 * Checks `Authorization: Bearer <token>` on every route of the scope before the body is read, in constant time.
 * Admin routes take GATEWAY_ADMIN_TOKEN and are off (403) while it is empty. The others take PLATFORM_GATEWAY_TOKEN;
 * empty leaves them open with one warning at start (development only; production refuses to start without it).
 * They also take an owner token minted from it (`owners`: a daemon's, `gw1.<user id>.<mac>`), which sets
 * `request.bearerOwner`: such a caller may meter to and read only its own user's DIDs (`requireOwnActor`).
 */
export function requireGatewayAuth(scope: FastifyInstance, tokens: { gatewayToken: string; adminToken: string; owners?: OwnerTokens }): void {
  scope.decorateRequest('bearerOwner', null);
  if (tokens.gatewayToken === '')
    scope.log.warn('PLATFORM_GATEWAY_TOKEN is empty: the chat and embedding routes are open; use this only on loopback or in development');
  documentSecurity(scope, 'gatewayToken', { type: 'http', scheme: 'bearer', description: 'PLATFORM_GATEWAY_TOKEN.' }, (route) =>
    accessOf(route.config) === 'gateway' ? 'required' : false,
  );
  documentSecurity(scope, 'adminToken', { type: 'http', scheme: 'bearer', description: 'GATEWAY_ADMIN_TOKEN, the operator token.' }, (route) =>
    accessOf(route.config) === 'admin' ? 'required' : false,
  );
  scope.addHook('onRequest', async (request) => {
    const access = routeAccess(request);
    const expected = access === 'admin' ? tokens.adminToken : tokens.gatewayToken;
    if (expected === '') {
      if (access === 'gateway') return;
      throw new GatewayError(403, 'permission_error', 'admin_disabled', 'operator routes are off: set GATEWAY_ADMIN_TOKEN to use them');
    }
    const presented = bearerFrom(request);
    const setting = access === 'admin' ? 'GATEWAY_ADMIN_TOKEN' : 'PLATFORM_GATEWAY_TOKEN';
    if (presented === undefined) throw new GatewayError(401, 'authentication_error', 'unauthorized', `missing bearer (Authorization: Bearer <${setting}>)`);
    if (access === 'gateway' && tokens.owners?.claims(presented)) {
      const check = tokens.owners.verify(presented);
      if (!check.ok) throw new GatewayError(401, 'authentication_error', 'unauthorized', `invalid owner token: ${check.reason}`);
      request.bearerOwner = check.owner;
      return;
    }
    if (!safeEqual(presented, expected)) throw new GatewayError(401, 'authentication_error', 'unauthorized', `invalid bearer: not the ${setting}`);
    request.bearerOwner = anyActor;
  });
}

/**
 * Refuses (403 `forbidden`) an actor the bearer may not act as: behind an owner token only a platform DID of its
 * owner (no wallet address, no other method: neither can be tied to the user); behind the root token or an open
 * gateway, any actor, as before.
 */
export function requireOwnActor(request: FastifyRequest, actor: string): void {
  if (!mayActAs(request.bearerOwner, actor))
    throw new GatewayError(403, 'permission_error', 'forbidden', 'X-Platform-Actor-DID is not a DID of the user this bearer was issued to', {
      param: 'X-Platform-Actor-DID',
    });
}
