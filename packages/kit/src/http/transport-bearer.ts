import type { FastifyInstance, FastifyRequest } from 'fastify';
import { safeEqual } from '../auth/safe-equal.ts';
import { ServiceError } from '../errors.ts';
import { apiDocsPaths, documentSecurity } from './openapi.ts';

export interface TransportBearerOptions {
  /** The shared fleet token; empty means every path is open (loopback or development only). */
  token: string;
  /** Paths that never need the bearer (health and root); the API description (`/openapi.json`, `/docs`) never does either. */
  publicPaths: readonly string[];
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
  if (options.token === '') {
    app.log.warn('transport bearer is empty: every path is open; use this only on loopback or in development');
    return;
  }
  const publicPaths = new Set([...options.publicPaths, ...apiDocsPaths]);
  documentSecurity(app, 'transportBearer', { type: 'http', scheme: 'bearer', description: 'The platform transport token.' }, (route) =>
    publicPaths.has(route.url) ? false : 'required',
  );
  app.addHook('onRequest', async (request) => {
    if (publicPaths.has(request.routeOptions.url ?? '')) return;
    const presented = bearerFrom(request);
    if (presented === undefined) throw new ServiceError('unauthorized', 'missing transport bearer (Authorization: Bearer <token>)');
    if (!safeEqual(presented, options.token)) throw new ServiceError('unauthorized', 'invalid transport bearer');
  });
}
