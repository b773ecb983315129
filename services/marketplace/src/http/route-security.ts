import { declareRequestHeader, documentSecurityAlternatives, type RouteShape } from '@platform/kit/http/openapi';
import type { FastifyInstance } from 'fastify';

/**
 * The developer routes' credentials in the API description: an `X-Developer-Token` from sign-in, or a request signed
 * by the wallet (`Authorization: Wallet <signature>` with its `X-Wallet-*` headers); the caller's own dashboard reads
 * take the caller token with `X-Caller-DID`; `/v1/me` either. The routes check them themselves (developer-auth.ts,
 * caller-auth.ts); this says which route takes which.
 */
export function documentDeveloperSecurity(app: FastifyInstance): void {
  const developer = [['developerToken'], ['walletSignature']];
  const caller = [['callerToken', 'callerDid']];
  documentSecurityAlternatives(
    app,
    {
      developerToken: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Developer-Token',
        description: 'A developer token from POST /v1/developers/auth (sign-in with Ethereum).',
      },
      walletSignature: {
        type: 'http',
        scheme: 'Wallet',
        description: 'A signature by the developer’s wallet over the canonical request, with X-Wallet-Address, X-Wallet-Timestamp and X-Wallet-Nonce.',
      },
    },
    (route) => {
      if (ownerRoute(route)) return developer;
      // Anyone reads a listing; its owner (with credentials) also sees it as a draft.
      if (route.method === 'GET' && route.url === '/v1/services/:id') return [...developer, []];
      if (route.url === '/v1/me') return [...caller, ...developer];
      if (route.url === '/v1/me/spend') return caller;
      return undefined;
    },
  );
  declareRequestHeader(app, 'idempotency-key', { description: 'Dedupes the write (the body’s idempotency_key says the same)', maxLength: 128 }, (route) =>
    idempotentRoute(route),
  );
  for (const name of ['x-wallet-address', 'x-wallet-timestamp', 'x-wallet-nonce'])
    declareRequestHeader(app, name, { description: 'Part of a wallet-signed request (Authorization: Wallet)', maxLength: 128 }, (route) =>
      takesDeveloper(route),
    );
}

const ownerReads = /^\/v1\/services\/:id\/(analytics|deployments|deployments\/:deployment_id|logs)$/;
const ownerWrites = /^\/v1\/services(\/:id(\/(publish|pause|delist|payout|artifacts|deploy|redeploy))?)?$/;

/** The routes only a listing's developer may use. */
export function ownerRoute(route: RouteShape): boolean {
  const method = [route.method].flat()[0];
  if (method === 'GET') return ownerReads.test(route.url) || route.url === '/v1/me/services' || route.url === '/v1/me/earnings';
  return (method === 'POST' || method === 'PATCH') && ownerWrites.test(route.url) && !(method === 'POST' && route.url === '/v1/services/:id');
}

/** The writes that take an Idempotency-Key: the owner's listing writes and payouts, paid calls and tab openings. */
function idempotentRoute(route: RouteShape): boolean {
  const method = [route.method].flat()[0];
  if (method === 'POST' && ['/v1/channels', '/v1/streams', '/v1/invoke/:service_id'].includes(route.url)) return true;
  return ownerRoute(route) && method !== 'GET' && !/(artifacts|deploy|redeploy)$/.test(route.url);
}

function takesDeveloper(route: RouteShape): boolean {
  return ownerRoute(route) || route.url === '/v1/me' || (route.url === '/v1/services/:id' && [route.method].flat()[0] === 'GET');
}
