import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import { type PrincipalClaims, rememberingVerifier } from '@platform/kit/auth/principal-token';
import { type Clock, unixSeconds } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { documentSecurity, type RouteShape } from '@platform/kit/http/openapi';
import { routeOf } from '@platform/kit/http/route-of';
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    caller: PrincipalClaims | null;
  }
}

/**
 * Callers identify with `Authorization: Bearer <CALLER_TOKEN>` (the principal token of the DID handshake,
 * signed text `platform-marketplace-auth:<did>:<nonce>`) and `X-Caller-DID`, which must name the token's DID.
 * The bearer only identifies: spending is authorised by the caller's own signature (`X-Ledger-Payment`, vouchers).
 * Runs on request, before the body is read, on the given route prefixes.
 */
export function requireCaller(app: FastifyInstance, options: { tokenKey: Buffer; clock: Clock; prefixes: readonly string[] }): void {
  app.decorateRequest('caller', null);
  const scheme = { type: 'http', scheme: 'bearer', description: 'A caller token from the DID handshake, with X-Caller-DID naming its DID.' } as const;
  const didHeader = { type: 'apiKey', in: 'header', name: 'X-Caller-DID', description: 'The DID the caller token was issued to.' } as const;
  const callerRoute = (route: RouteShape) => (options.prefixes.some((prefix) => route.url.startsWith(prefix)) ? 'required' : false);
  documentSecurity(app, 'callerToken', scheme, callerRoute);
  documentSecurity(app, 'callerDid', didHeader, callerRoute);
  const verifyCaller = callerVerifier(options);
  app.addHook('onRequest', async (request) => {
    const url = routeOf(request).url ?? '';
    if (!options.prefixes.some((prefix) => url.startsWith(prefix))) return;
    request.caller = verifyCaller(request);
  });
}

/**
 * Checks a request's caller now (also for routes that accept a developer instead). Made once per app: it remembers
 * tokens that verified (the kit's remembering verifier), so a caller's later requests skip decoding and the HMAC;
 * expiry is checked on every use.
 */
export function callerVerifier(options: { tokenKey: Buffer; clock: Clock }): (request: FastifyRequest) => PrincipalClaims {
  const verify = rememberingVerifier(options.tokenKey);
  return (request) => {
    const header = request.headers.authorization;
    const token = typeof header === 'string' && /^Bearer /i.test(header) ? header.slice(7).trim() : '';
    if (token === '') throw new ServiceError('unauthorized', 'missing caller token (Authorization: Bearer <token from /v1/agent/auth/verify>)');
    const check = verify(token, unixSeconds(options.clock.now()));
    if (!check.ok) throw new ServiceError('unauthorized', `invalid caller token: ${check.reason}`);
    const named = request.headers['x-caller-did'];
    const parsed = typeof named === 'string' ? parseDid(named.trim()) : undefined;
    if (!parsed) throw new ServiceError('unauthorized', 'missing or malformed X-Caller-DID header');
    const tokenDid = parseDid(check.claims.did);
    if (!tokenDid || canonicalDid(parsed) !== canonicalDid(tokenDid))
      throw new ServiceError('unauthorized', 'X-Caller-DID does not name the DID the caller token was issued to');
    return { ...check.claims, did: canonicalDid(tokenDid) };
  };
}

/** The verified caller of a request behind `requireCaller`; a programming error if absent. */
export function callerOf(request: FastifyRequest): PrincipalClaims {
  if (!request.caller) throw new Error('route is not behind requireCaller');
  return request.caller;
}
