import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireMayActAs } from '../auth/owner-actor.ts';
import { type PrincipalClaims, rememberingVerifier } from '../auth/principal-token.ts';
import { type Clock, unixSeconds } from '../clock.ts';
import { ServiceError } from '../errors.ts';
import { documentSecurity } from './openapi.ts';
import { routeOf } from './route-of.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: PrincipalClaims | null;
  }
}

export interface PrincipalOptions {
  /** The header carrying the token, e.g. `X-Scheduler-Agent`. */
  header: string;
  tokenKey: Buffer;
  clock: Clock;
  /** Route URL prefixes that need a principal. */
  prefixes: readonly string[];
  /**
   * Routes where the token is optional because the body may authorise instead (a signed intent): a token
   * that is present must still be valid, and the handler decides when neither is given.
   */
  optional?: readonly string[];
}

/**
 * Layer 2: verifies the principal token on every route under the given prefixes and sets `request.principal`.
 * It runs on request, before the body is read or validated, so an unauthenticated caller learns nothing else.
 * Behind an owner token (the transport bearer's `owners` option, registered before this), the principal must be a DID
 * of the token's owner (403 otherwise): a principal token names a user, and one user's bearer may not carry another's.
 *
 * @example requirePrincipal(app, { header: 'X-Scheduler-Agent', tokenKey, clock, prefixes: ['/v1/alarms'] })
 */
export function requirePrincipal(app: FastifyInstance, options: PrincipalOptions): void {
  const header = options.header.toLowerCase();
  app.decorateRequest('principal', null);
  const verify = rememberingVerifier(options.tokenKey);
  documentSecurity(
    app,
    'principalToken',
    { type: 'apiKey', in: 'header', name: options.header, description: 'A principal token from the DID handshake.' },
    (route) => {
      if (options.optional?.includes(route.url)) return 'optional';
      return options.prefixes.some((prefix) => route.url.startsWith(prefix)) ? 'required' : false;
    },
  );
  app.addHook('onRequest', async (request) => {
    const url = routeOf(request).url ?? '';
    const optional = options.optional?.includes(url) ?? false;
    if (!optional && !options.prefixes.some((prefix) => url.startsWith(prefix))) return;
    const raw = request.headers[header];
    const token = typeof raw === 'string' ? raw.trim() : '';
    if (token === '' && optional) return;
    if (token === '') throw new ServiceError('unauthorized', `missing principal token (${options.header} header)`);
    const check = verify(token, unixSeconds(options.clock.now()));
    if (!check.ok) throw new ServiceError('unauthorized', `invalid principal token: ${check.reason}`);
    requireMayActAs(request.bearerOwner ?? null, check.claims.did, `the principal token's DID (${options.header})`);
    request.principal = check.claims;
  });
}

/** The verified principal of a request behind `requirePrincipal`; a programming error if absent. */
export function principalOf(request: FastifyRequest): PrincipalClaims {
  if (!request.principal) throw new Error('route is not behind requirePrincipal');
  return request.principal;
}
