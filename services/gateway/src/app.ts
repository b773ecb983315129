import { gatewayOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import type { Clock } from '@platform/kit/clock';
import type { Database } from '@platform/kit/db/open-database';
import { createServiceApp, type ObservabilityDeps, observabilityOptions } from '@platform/kit/http/create-app';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { GatewayCalls } from './calls/gateway-calls.ts';
import { keepRawJsonBodies } from './calls/request-bodies.ts';
import type { GatewaySettings } from './config.ts';
import type { GatewaySchema } from './db/schema.ts';
import { requireGatewayAuth } from './http/gateway-auth.ts';
import { installKillSwitch } from './http/kill-switch.ts';
import { installOpenAiErrors, openAiFailureEnvelope } from './http/openai-errors.ts';
import { declarePlatformHeaders } from './http/platform-headers.ts';
import { BudgetRepository, recallChannel, returnedChannel } from './metering/budget.repository.ts';
import { BudgetLeases } from './metering/budget-leases.ts';
import { Meter } from './metering/meter.ts';
import { gatewayMetrics } from './metrics.ts';
import { ModelPolicy } from './models/model-policy.ts';
import { capsChannel, OperatorRepository } from './operator/operator.repository.ts';
import type { RateCardBook } from './rate-cards/rate-card-book.ts';
import { registerGatewayRoutes } from './routes/index.ts';
import type { DrainSlots } from './streaming/drain-slots.ts';
import { UpstreamClient } from './upstream/upstream-client.ts';

export const serviceName = 'gateway';
export const serviceVersion = '0.1.0';

/**
 * Gives back every unused budget slice, as the gateway does once an actor goes quiet, and resolves once every grant,
 * booking and return submitted so far is committed (tests and operators read the database after it).
 */
export function meteringSettled(app: FastifyInstance): Promise<void> {
  return app.getDecorator<() => Promise<void>>(settledDecorator)();
}

const settledDecorator = 'gatewayMeteringSettled';

type Listen = (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>;

export interface AppDeps extends ObservabilityDeps {
  db: Kysely<GatewaySchema>;
  /** PGlite is one connection: batches queue for it anyway, and need no row-lock ordering. */
  databaseKind: Database<GatewaySchema>['kind'];
  ping: () => Promise<boolean>;
  /** The database's LISTEN: cap changes and budget recalls from other instances arrive through it. */
  listen: Listen;
  clock: Clock;
  logger: Logger;
  settings: GatewaySettings;
  /** Loaded (and followed) by the caller. */
  book: RateCardBook;
  drains: DrainSlots;
}

/** The gateway's HTTP surface. No listening, no environment: everything arrives in `deps`. */
export function buildApp(deps: AppDeps) {
  const { settings, clock, logger, db } = deps;
  const app = createServiceApp({
    logger,
    bodyLimit: settings.maxBodyBytes,
    api: { title: serviceName, version: serviceVersion },
    failureEnvelopeAt: (url) => (url === '/v1' || url.startsWith('/v1/') ? openAiFailureEnvelope : undefined),
    ...observabilityOptions(deps),
  });
  // First hook of all: with the switch on, nothing else runs.
  installKillSwitch(app, settings.disabled);
  registerHealthRoutes(app, { service: serviceName, version: serviceVersion, ping: deps.ping });
  const policy = new ModelPolicy(settings.models);
  const upstream = settings.upstreamUrl
    ? new UpstreamClient({
        baseUrl: settings.upstreamUrl,
        maxSockets: settings.upstreamMaxSockets,
        timeoutMs: settings.upstreamTimeoutMs,
        maxResponseBytes: settings.maxResponseBytes,
        clock,
      })
    : undefined;
  if (!upstream) logger.warn('GATEWAY_UPSTREAM_URL is not set: chat and embedding calls will get 503 until it is');
  const oneConnection = deps.databaseKind === 'pglite';
  const budget = new BudgetRepository(db, clock, {
    defaultCapUnits: settings.defaultDailyCapUnits,
    asyncCommit: settings.asyncCommit,
    bookingLingerMs: settings.bookingLingerMs,
    lockRows: !oneConnection,
    maxInFlight: oneConnection ? 1 : 4,
  });
  const leases = new BudgetLeases({
    repository: budget,
    clock,
    logger,
    settings: { ttlMs: settings.leaseTtlMs, sliceCalls: settings.leaseSliceCalls },
  });
  // Registered here, where what they count is built; the model label is one of the configured models or `other`.
  const counting = gatewayMetrics(app.metrics, { models: policy.reachableModels(), leasesHeld: () => leases.leasesHeld() });
  const meter = new Meter({ leases, clock, logger, metrics: counting });
  app.decorate(settledDecorator, () => {
    leases.returnIdle(0);
    return budget.flushed();
  });
  followBudgetSignals(app, leases, deps.listen);
  const calls = new GatewayCalls({ settings, policy, book: deps.book, meter, upstream, drains: deps.drains, clock, logger, metrics: counting });
  const unpriced = policy.reachableModels().filter((model) => !deps.book.current().prices.has(model));
  if (unpriced.length > 0) logger.warn({ models: unpriced }, 'free-tier models the newest rate card does not price: calls to them get 400 model_not_priced');
  // Encapsulated: the OpenAI error shape, the raw-body parser and the bearers apply to /v1 only.
  app.register(
    async (scope) => {
      installOpenAiErrors(scope);
      keepRawJsonBodies(scope);
      declarePlatformHeaders(scope);
      requireGatewayAuth(scope, {
        gatewayToken: settings.gatewayToken,
        adminToken: settings.adminToken,
        ...(settings.gatewayToken === '' ? {} : { owners: new OwnerTokens(settings.gatewayToken, gatewayOwnerTokens) }),
      });
      registerGatewayRoutes(scope, {
        calls,
        operator: new OperatorRepository(db, clock),
        capChanged: (actor) => leases.capChanged(actor),
        book: deps.book,
        policy,
        defaultCapUnits: settings.defaultDailyCapUnits,
      });
    },
    { prefix: '/v1' },
  );
  // Abandoned streams stop draining (charged their reservation) and every booking lands before the database closes.
  app.addHook('preClose', async () => {
    deps.drains.stopAll();
    // server.close() ends idle keep-alive sockets but waits out the headers timeout (about a minute) on a socket that
    // never sent a request. Once no call is in flight, and a second has let the last answers flush, drop the rest.
    void calls.idle().then(() => setTimeout(() => app.server.closeAllConnections(), 1_000).unref());
  });
  app.addHook('onClose', async () => {
    await calls.idle();
    upstream?.close();
    // Every booking lands first, then the holder ends and whatever its slices still hold goes back to the days.
    await budget.flushed();
    await leases.retire().catch((error: unknown) => logger.warn({ err: error }, 'could not give the budget leases back; they return when they expire'));
  });
  return app;
}

/**
 * Cap changes (this instance's admin routes, or another's through NOTIFY; a reconnect's empty payload means any
 * actor) and recalls from instances that were refused reach the slices; the housekeeping runs until close.
 */
function followBudgetSignals(app: FastifyInstance, leases: BudgetLeases, listen: Listen): void {
  const stopHousekeeping = new AbortController();
  const unlisten: Array<() => Promise<void>> = [];
  app.addHook('onReady', async () => {
    unlisten.push(await listen(capsChannel, (actor) => leases.capChanged(actor === '' ? undefined : actor)));
    // Their payload is `<actor> <day>`; a DID has no spaces, the day none either.
    const onActorDay = (handle: (actor: string, day: string) => void) => (payload: string) => {
      const split = payload.lastIndexOf(' ');
      if (split > 0) handle(payload.slice(0, split), payload.slice(split + 1));
    };
    unlisten.push(
      await listen(
        recallChannel,
        onActorDay((actor, day) => leases.recall(actor, day)),
      ),
    );
    unlisten.push(
      await listen(
        returnedChannel,
        onActorDay((actor, day) => leases.returned(actor, day)),
      ),
    );
    void leases.runHousekeeping(stopHousekeeping.signal);
  });
  app.addHook('onClose', async () => {
    stopHousekeeping.abort();
    for (const stop of unlisten.splice(0)) await stop();
  });
}
