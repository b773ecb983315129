import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { NonceStore } from '@platform/kit/auth/nonce-store';
import { deriveTokenKey } from '@platform/kit/auth/principal-token';
import { safeEqual } from '@platform/kit/auth/safe-equal';
import type { Clock } from '@platform/kit/clock';
import { createServiceApp, type ObservabilityDeps, observabilityOptions, type ServiceApp } from '@platform/kit/http/create-app';
import { registerHandshakeRoutes } from '@platform/kit/http/handshake-routes';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import { requirePrincipal } from '@platform/kit/http/principal';
import { rateLimit, type TakeToken } from '@platform/kit/http/rate-limit';
import { routeOf } from '@platform/kit/http/route-of';
import { bearerFrom, requireTransportBearer } from '@platform/kit/http/transport-bearer';
import { metricsPath } from '@platform/kit/observability/metrics';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Type } from 'typebox';
import type { SettlementChain } from './chain/settlement-chain.ts';
import type { RateSetting, WindowSettings } from './config.ts';
import type { SettlementSchema } from './db/schema.ts';
import type { SequencerKey } from './ledger/ledger-key.ts';
import type { Sequencer } from './ledger/sequencer.ts';
import type { LedgerReads } from './reads/ledger-reads.ts';
import { registerAccountRoutes, registerOperatorRoutes } from './routes/account-routes.ts';
import type { SignatureVerifier } from './routes/authorise.ts';
import { limits } from './routes/inputs.ts';
import { registerMovementRoutes } from './routes/movement-routes.ts';
import { registerPublicRoutes } from './routes/public-routes.ts';
import { ChainHealth } from './routes/responses.ts';
import type { EventHub } from './stream/event-hub.ts';
import { registerStreamRoute } from './stream/stream-route.ts';

export const serviceName = 'settlement';
export const serviceVersion = '0.1.0';

export interface AppDeps extends ObservabilityDeps {
  db: Kysely<SettlementSchema>;
  ping: () => Promise<boolean>;
  clock: Clock;
  logger: Logger;
  sequencer: Sequencer;
  reads: LedgerReads;
  hub: EventHub;
  chain: SettlementChain;
  key: SequencerKey;
  transportToken: string;
  agentAuthSecret: string;
  operatorToken: string;
  dev: boolean;
  window: WindowSettings;
  holdMaxSeconds: number;
  /** Where intents' signatures are checked (a worker thread); inline when absent. */
  intentSignatures?: SignatureVerifier;
  rates: { read: RateSetting; write: RateSetting; auth: RateSetting };
  /** The rate-limit buckets, when the service's front threads take from the same ones; this app's own otherwise. */
  takeToken?: TakeToken;
  trustProxy?: boolean;
}

/** The principal routes: the fleet gate (LEDGER_TOKEN) applies to these and only these. */
const principalRoutes = [
  '/v1/balance',
  '/v1/holds',
  '/v1/deposit',
  '/v1/account/evm',
  '/v1/pay',
  '/v1/hold',
  '/v1/hold/:id/capture',
  '/v1/hold/:id/release',
  '/v1/hold/batch',
  '/v1/hold/batch/settle',
  '/v1/withdraw',
  '/v1/settle',
  '/v1/dev/faucet',
];
/** Routes a signed intent in the body can authorise instead of a token. */
const intentRoutes = ['/v1/pay', '/v1/hold', '/v1/hold/batch', '/v1/withdraw'];
const tokenRoutes = principalRoutes.filter((route) => !intentRoutes.includes(route));
// A scrape is never refused for the public's traffic from its address; it has its own bearer.
const unlimited = new Set(['/', '/healthz', '/v1/operator/deposits', metricsPath]);

/**
 * read: the explorer and GETs; auth: the handshake; write: every POST that moves or binds. A request carrying the
 * fleet's LEDGER_TOKEN comes from one of our own services (the marketplace placing every caller's holds from one
 * address): per-address limits are for the public, so it is not limited.
 */
export function rateClassFor(transportToken: string) {
  return (request: FastifyRequest): 'read' | 'write' | 'auth' | undefined => {
    if (transportToken !== '') {
      const presented = bearerFrom(request);
      if (presented !== undefined && safeEqual(presented, transportToken)) return undefined;
    }
    return rateClass(request);
  };
}

function rateClass(request: FastifyRequest): 'read' | 'write' | 'auth' | undefined {
  const url = routeOf(request).url;
  if (url === undefined || unlimited.has(url)) return undefined;
  if (url.startsWith('/v1/agent/auth/')) return 'auth';
  return request.method === 'GET' ? 'read' : 'write';
}

/**
 * Every 503 (a standby refusing a write, a write that could not be confirmed, the database out of reach) says when to
 * try again: a standby polls for the lock once a second by default, and a sequencer that lost its session takes the
 * lock again as soon: `Retry-After: 1`.
 */
export function retryAfterOnUnavailable(app: ServiceApp): void {
  app.addHook('onSend', async (_request, reply) => {
    if (reply.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
  });
}

/** Routes behind the fleet gate and the principal check; encapsulated, so those hooks apply to them only. */
export function registerGatedRoutes(app: ServiceApp, options: { transportToken: string; tokenKey: Buffer; clock: Clock }, routes: (gated: ServiceApp) => void) {
  app.register(async (plugin) => {
    const gated = plugin.withTypeProvider<TypeBoxTypeProvider>();
    requireTransportBearer(gated, { token: options.transportToken, publicPaths: [] });
    requirePrincipal(gated, { header: 'X-Ledger-Agent', tokenKey: options.tokenKey, clock: options.clock, prefixes: tokenRoutes, optional: intentRoutes });
    routes(gated);
  });
}

/** The settlement HTTP surface. No listening, no environment: everything arrives in `deps`. */
export function buildApp(deps: AppDeps) {
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: limits.bodyBytes,
    trustProxy: deps.trustProxy ?? false,
    api: { title: serviceName, version: serviceVersion },
    ...observabilityOptions(deps),
  });
  retryAfterOnUnavailable(app);
  // First: a flood is refused before any token is checked or body read.
  rateLimit(app, { classes: deps.rates, classify: rateClassFor(deps.transportToken), clock: deps.clock, take: deps.takeToken });
  const tokenKey = deriveTokenKey(deps.agentAuthSecret, serviceName);
  const routes = {
    sequencer: deps.sequencer,
    reads: deps.reads,
    clock: deps.clock,
    chain: deps.chain,
    holdMaxSeconds: deps.holdMaxSeconds,
    ...(deps.intentSignatures ? { intentSignatures: deps.intentSignatures } : {}),
  };
  registerGatedRoutes(app, { transportToken: deps.transportToken, tokenKey, clock: deps.clock }, (gated) => {
    registerMovementRoutes(gated, routes);
    registerAccountRoutes(gated, { ...routes, dev: deps.dev });
  });
  registerHealthRoutes(app, {
    service: serviceName,
    version: serviceVersion,
    ping: deps.ping,
    // A failed reserve check or a frozen vault is loud here too, while the process stays alive to be looked at.
    details: () => {
      const chain = deps.chain.health();
      return chain ? { chain, ...(chain.alarm ? { status: 'alarm' } : {}) } : {};
    },
    detailsSchema: { chain: Type.Optional(ChainHealth) },
  });
  registerHandshakeRoutes(app, { service: serviceName, nonces: new NonceStore(deps.db, deps.clock), tokenKey, clock: deps.clock });
  registerPublicRoutes(app, { ...routes, key: deps.key, window: deps.window, version: serviceVersion });
  registerOperatorRoutes(app, { ...routes, operatorToken: deps.operatorToken });
  registerStreamRoute(app, { hub: deps.hub });
  return app;
}
