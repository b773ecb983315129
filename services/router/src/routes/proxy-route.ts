import { failure } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import { inSpan } from '@platform/kit/observability/tracing';
import { remembered } from '@platform/kit/remembered';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UserRow } from '../db/schema.ts';
import type { EnvironmentUser } from '../environments/provider.ts';
import { corsHeaders } from '../http/cors.ts';
import { forward, type Upstream, upstreamAt } from '../proxy/forward.ts';
import { IdleSweep } from '../proxy/idle-sweep.ts';
import { authenticate, withRetryAfter } from './authenticate.ts';
import { isPublicRead, type PublicRead } from './public-reads.ts';
import { passedThrough } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

export function environmentUser(row: UserRow): EnvironmentUser {
  return { id: row.idp_user_id, region: row.region, environmentId: row.environment_id, volume: row.volume };
}

/**
 * Wakes the user's environment for a request and counts the request as activity from the start, not only once the
 * environment is ready: the idle reaper must not stop an environment while it is being woken (a user last seen long
 * ago, or never, is idle by the clock). Resolves with the environment ready and `activity.begin` done; on failure
 * the activity is ended. The caller ends it when the request is over.
 */
export async function readyAndActive(deps: RouteDeps, user: EnvironmentUser, deadline: number): Promise<Awaited<ReturnType<RouteDeps['wake']['ready']>>> {
  deps.activity.begin(user.id);
  try {
    // A span of its own: the wait for a cold start is where a slow first request spends its time.
    return await inSpan('environment ready', {}, async (span) => {
      const ready = await deps.wake.ready(user, deadline);
      span.setAttribute('platform.cold_start', ready.coldStartMs !== undefined);
      return ready;
    });
  } catch (error) {
    deps.activity.end(user.id);
    throw error;
  }
}

/** When a request stops waiting for its environment (provisioning and wake together): ROUTER_WAKE_TIMEOUT from now. */
export function waitDeadline(deps: RouteDeps): number {
  return deps.clock.now().getTime() + deps.config.wakeTimeoutMs;
}

type Target = 'gateway' | 'cody' | 'ledger' | 'market' | 'daemon';

/**
 * Where a public path goes: the gateway (`/gw` stripped), the co-located code engine (`/cody` stripped), settlement's
 * and the marketplace's public reads (`/ledger`, `/market` stripped), or the daemon.
 */
function route(url: string): { to: Target; path: string } {
  for (const [prefix, to] of [
    ['/gw', 'gateway'],
    ['/cody', 'cody'],
    ['/ledger', 'ledger'],
    ['/market', 'market'],
  ] as const)
    if (url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) return { to, path: url.slice(prefix.length) || '/' };
  return { to: 'daemon', path: url };
}

/** Where the proxy streams to, parsed once: the services, and each environment's address as it is first seen. */
interface Upstreams {
  gateway: Upstream;
  ledger: Upstream | undefined;
  market: Upstream | undefined;
  /** An environment's address (the provider's URL string) parsed: a URL parse a proxied request otherwise. */
  environment: (address: string) => Upstream;
}

function configuredUpstreams(config: RouteDeps['config']): Upstreams {
  const { settlementUrl, marketplaceUrl } = config.publicReads;
  return {
    gateway: upstreamAt(config.gatewayUrl),
    ledger: settlementUrl === undefined ? undefined : upstreamAt(settlementUrl),
    market: marketplaceUrl === undefined ? undefined : upstreamAt(marketplaceUrl),
    environment: remembered(upstreamAt, 10_000),
  };
}

/** A 503 in the envelope with Retry-After, written straight to a response the proxy had taken over. */
function unavailableRaw(reply: FastifyReply, cors: Record<string, string>, message: string): void {
  if (reply.raw.headersSent) return void reply.raw.destroy();
  const body = JSON.stringify(failure(new ServiceError('unavailable', message)));
  reply.raw.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1', 'content-length': Buffer.byteLength(body), ...cors });
  reply.raw.end(body);
}

/**
 * `/ledger/*` and `/market/*`: settlement's and the marketplace's public reads, for a signed-in user's console. Only
 * GET (and HEAD) of the listed read routes pass, with no credential of the user's or the platform's (they are public
 * routes); anything else is 404 before any upstream is asked.
 */
function publicRead(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: RouteDeps,
  target: PublicRead,
  upstream: Upstream | undefined,
  cors: Record<string, string>,
  idle: IdleSweep,
): void {
  const allowed = request.method === 'GET' || request.method === 'HEAD';
  if (!allowed || !isPublicRead(target))
    throw new ServiceError('not_found', `${request.method} /${target.service}${target.path.split('?')[0]} is not a public read`);
  if (upstream === undefined)
    throw new ServiceError(
      'unavailable',
      `no ${target.service === 'ledger' ? 'settlement' : 'marketplace'} is configured: set ${target.service === 'ledger' ? 'ROUTER_SETTLEMENT_URL' : 'ROUTER_MARKETPLACE_URL'}`,
      {
        retryable: false,
      },
    );
  reply.hijack();
  forward(
    request.raw,
    reply.raw,
    { hostname: upstream.hostname, port: upstream.port, path: `${upstream.basePath}${target.path}`, headers: {} },
    {
      dispatcher: deps.agents.gateway,
      idle,
      responseHeaders: cors,
      onFailureBeforeAnswer: () =>
        unavailableRaw(reply, cors, `${target.service === 'ledger' ? 'settlement' : 'the marketplace'} cannot be reached; retry shortly`),
      onEnd: () => {},
      timing: deps.metrics.proxy[target.service === 'ledger' ? 'settlement' : 'marketplace'],
    },
  );
}

/**
 * `ANY /*`: authenticate, resolve the user's account, wake their environment (single flight), then stream the request
 * to their daemon with the daemon's own bearer (never the user's token) and their id. The body is not read by the
 * router: a scope without body parsers passes the request stream through untouched.
 */
export async function registerProxyRoute(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const upstreams = configuredUpstreams(deps.config);
  const idle = new IdleSweep(deps.clock, deps.config.proxyTimeoutMs);
  app.addHook('onClose', async () => idle.close());
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const schema = {
      description: 'Everything else goes to the caller’s daemon (or /gw to the gateway), once the JWT is checked and the environment is awake.',
      response: { '2xx': passedThrough, '3xx': passedThrough },
    };
    scope.all('/*', { schema }, async (request, reply) => {
      try {
        await proxy(request, reply, deps, upstreams, idle);
      } catch (error) {
        throw withRetryAfter(reply, error);
      }
    });
  });
}

async function proxy(request: FastifyRequest, reply: FastifyReply, deps: RouteDeps, upstreams: Upstreams, idle: IdleSweep): Promise<void> {
  const userId = await authenticate(request, reply, deps);
  const cors = corsHeaders(deps.config.corsOrigins, request.headers, false);
  const target = route(request.url);
  if (target.to === 'ledger' || target.to === 'market')
    return publicRead(request, reply, deps, { service: target.to, path: target.path }, upstreams[target.to], cors, idle);
  if (target.to === 'gateway') {
    const gateway = upstreams.gateway;
    // The user's own ledger key at the gateway; the platform's bearer, never the user's token.
    const headers: Record<string, string> = { 'x-platform-actor-did': `did:user:${userId}` };
    if (deps.config.gatewayToken !== '') headers.authorization = `Bearer ${deps.config.gatewayToken}`;
    reply.hijack();
    return forward(
      request.raw,
      reply.raw,
      { hostname: gateway.hostname, port: gateway.port, path: `${gateway.basePath}${target.path}`, headers },
      {
        dispatcher: deps.agents.gateway,
        idle,
        responseHeaders: cors,
        onFailureBeforeAnswer: () => unavailableRaw(reply, cors, 'the gateway cannot be reached; retry shortly'),
        onEnd: () => {},
        timing: deps.metrics.proxy.gateway,
      },
    );
  }
  const deadline = waitDeadline(deps);
  const user = environmentUser(await deps.access.activeUser(userId, deadline));
  const ready = await readyAndActive(deps, user, deadline);
  const address = upstreams.environment(ready.address);
  const port = target.to === 'cody' ? deps.config.codyPort : address.port;
  const added: Record<string, string> = { ...cors };
  if (ready.coldStartMs !== undefined) added['x-platform-cold-start-ms'] = String(ready.coldStartMs);
  reply.hijack();
  forward(
    request.raw,
    reply.raw,
    { hostname: address.hostname, port, path: target.path, headers: { authorization: `Bearer ${deps.daemonToken(userId)}`, 'x-platform-user-id': userId } },
    {
      dispatcher: deps.agents.environments,
      idle,
      responseHeaders: added,
      onFailureBeforeAnswer: (error) => {
        deps.logger.warn({ err: error, user: userId, to: target.to }, 'environment did not answer');
        unavailableRaw(
          reply,
          cors,
          target.to === 'cody' ? 'the code engine cannot be reached; retry shortly' : 'your environment did not answer; retry shortly',
        );
      },
      onEnd: () => deps.activity.end(userId),
      timing: deps.metrics.proxy[target.to],
    },
  );
}
