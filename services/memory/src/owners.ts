import { memoryOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { ServiceError } from '@platform/kit/errors';
import type { FastifyRequest } from 'fastify';

/**
 * The owner of whatever the root MEMORY_MCP_TOKEN (or an open server) stores: a standalone deployment's one user.
 * `@` is outside the owner pattern, so no per-user token can name it.
 */
export const rootOwner = '@root';

/** Per-user tokens minted from the root token; none when the server is open (empty token). */
export function ownerTokensFor(token: string): OwnerTokens | undefined {
  return token === '' ? undefined : new OwnerTokens(token, memoryOwnerTokens);
}

/** Who is asking: the owner the bearer verified as; the root owner on an open server. */
export function ownerOf(request: FastifyRequest, open: boolean): string {
  if (open) return rootOwner;
  const owner = request.bearerOwner;
  // The bearer hook sets it on every guarded route; a route reached without it is a wiring mistake, never served.
  if (typeof owner !== 'string' || owner === '') throw new ServiceError('unauthorized', 'no verified owner for this request');
  return owner;
}
