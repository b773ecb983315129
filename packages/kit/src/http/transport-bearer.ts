import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OwnerTokens } from '../auth/owner-token.ts';
import { safeEqual } from '../auth/safe-equal.ts';
import { ServiceError } from '../errors.ts';
import { metricsPath } from '../observability/metrics.ts';
import { apiDocsPaths, documentSecurity } from './openapi.ts';
import { routeOf } from './route-of.ts';

export interface TransportBearerOptions {
  /** The shared fleet token; empty means every path is open (loopback or development only). */
  token: string;
  /** Paths that never need the bearer (health and root); the API description (`/openapi.json`, `/docs`) never does either. */
  publicPaths: readonly string[];
  /**
   * Also accept owner tokens minted from `token` (`auth/owner-token.ts`), and set `request.bearerOwner`: the owner a
   * verified owner token names, or `rootOwner` for the root token itself. A service that scopes data per owner
   * reads the owner from there, never from the request's body.
   */
  owners?: { tokens: OwnerTokens; rootOwner: string };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The owner the bearer verified as (`owners` option only); null when not checked. */
    bearerOwner: string | null;
  }
}

/** Reads `Authorization: Bearer <token>`; returns the token or undefined. */
export function bearerFrom(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Layer 1: the transport bearer proving the caller is a legitimate platform daemon, compared in constant time.
 * With an empty token every path is open and a warning is logged once at start.
 *
 * @example requireTransportBearer(app, { token: config.transportToken, publicPaths: ['/', '/healthz'] })
 */
export function requireTransportBearer(app: FastifyInstance, options: TransportBearerOptions): void {
  if (options.owners !== undefined) app.decorateRequest('bearerOwner', null);
  if (options.token === '') {
    app.log.warn('transport bearer is empty: every path is open; use this only on loopback or in development');
    return;
  }
  // `/metrics` asks for its own bearer, the metrics token (observability/http-metrics.ts).
  const publicPaths = new Set([...options.publicPaths, ...apiDocsPaths, metricsPath]);
  documentSecurity(app, 'transportBearer', { type: 'http', scheme: 'bearer', description: 'The platform transport token.' }, (route) =>
    publicPaths.has(route.url) ? false : 'required',
  );
  app.addHook('onRequest', async (request) => {
    if (publicPaths.has(routeOf(request).url ?? '')) return;
    const presented = bearerFrom(request);
    if (presented === undefined) throw new ServiceError('unauthorized', 'missing transport bearer (Authorization: Bearer <token>)');
    const owners = options.owners;
    if (owners?.tokens.claims(presented)) {
      const check = owners.tokens.verify(presented);
      if (!check.ok) throw new ServiceError('unauthorized', `invalid owner token: ${check.reason}`);
      request.bearerOwner = check.owner;
      return;
    }
    if (!safeEqual(presented, options.token)) throw new ServiceError('unauthorized', 'invalid transport bearer');
    if (owners !== undefined) request.bearerOwner = owners.rootOwner;
  });
}
