import { ServiceError } from '@platform/kit/errors';
import { bearerFrom } from '@platform/kit/http/transport-bearer';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDeps } from './route-deps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified user of a route that authenticates on request (`authenticateOnRequest`); empty before it. */
    routerUserId: string;
  }
}

/**
 * The verified user of a public request: `Authorization: Bearer <identity-provider JWT>`. A missing or refused token
 * is 401 with `WWW-Authenticate`; without a configured identity provider, 503 naming IDP_URL.
 */
export async function authenticate(request: FastifyRequest, reply: FastifyReply, deps: Pick<RouteDeps, 'verifier'>): Promise<string> {
  if (deps.verifier === undefined)
    throw new ServiceError('unavailable', 'no identity provider is configured: set IDP_URL (and ROUTER_IDP_AUDIENCE)', { retryable: false });
  const token = bearerFrom(request);
  if (token === undefined) {
    reply.header('www-authenticate', 'Bearer');
    throw new ServiceError('unauthorized', 'missing bearer token (Authorization: Bearer <identity-provider JWT>)');
  }
  const verified = await deps.verifier.verify(token);
  if (!verified.ok) {
    // A header value is printable ASCII, and the description sits inside quotes.
    const description = verified.reason.replace(/[^\x20-\x7e]|"/g, "'");
    reply.header('www-authenticate', `Bearer error="invalid_token", error_description="${description}"`);
    throw new ServiceError('unauthorized', `invalid token: ${verified.reason}`);
  }
  return verified.userId;
}

/**
 * Authenticates a route's request as it arrives, before its body is read or validated (as every protected route of
 * the platform does), so a caller without a valid token learns nothing from the route about its body: 401, not 400.
 * The user is then `request.routerUserId`.
 */
export function authenticateOnRequest(app: FastifyInstance, deps: Pick<RouteDeps, 'verifier'>) {
  app.decorateRequest('routerUserId', '');
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      request.routerUserId = await authenticate(request, reply, deps);
    } catch (error) {
      throw withRetryAfter(reply, error);
    }
  };
}

/** Copies a refusal's `retry_after` into the Retry-After header before the error is rendered. */
export function withRetryAfter(reply: FastifyReply, error: unknown): unknown {
  const seconds = error instanceof ServiceError ? error.details?.retry_after : undefined;
  if (typeof seconds === 'number') reply.header('retry-after', String(seconds));
  return error;
}
