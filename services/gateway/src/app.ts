import type { Clock } from '@platform/kit/clock';
import { createServiceApp } from '@platform/kit/http/create-app';
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
import { installOpenAiErrors } from './http/openai-errors.ts';
import { BudgetRepository } from './metering/budget.repository.ts';
import { Meter } from './metering/meter.ts';
import { ModelPolicy } from './models/model-policy.ts';
import { OperatorRepository } from './operator/operator.repository.ts';
import type { RateCardBook } from './rate-cards/rate-card-book.ts';
import { registerGatewayRoutes } from './routes/index.ts';
import type { DrainSlots } from './streaming/drain-slots.ts';
import { UpstreamClient } from './upstream/upstream-client.ts';

export const serviceName = 'gateway';
export const serviceVersion = '0.1.0';

/** Resolves once every reservation and booking submitted so far is committed (tests read the database after it). */
export function bookingsFlushed(app: FastifyInstance): Promise<void> {
  return app.getDecorator<() => Promise<void>>(flushedDecorator)();
}

const flushedDecorator = 'gatewayBookingsFlushed';

export interface AppDeps {
  db: Kysely<GatewaySchema>;
  ping: () => Promise<boolean>;
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
  const app = createServiceApp({ logger, bodyLimit: settings.maxBodyBytes, api: { title: serviceName, version: serviceVersion } });
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
  const budget = new BudgetRepository(db, clock, { defaultCapUnits: settings.defaultDailyCapUnits, asyncCommit: settings.asyncCommit });
  const meter = new Meter({ repository: budget, clock, logger });
  app.decorate(flushedDecorator, () => budget.flushed());
  const calls = new GatewayCalls({ settings, policy, book: deps.book, meter, upstream, drains: deps.drains, clock, logger });
  const unpriced = policy.reachableModels().filter((model) => !deps.book.current().prices.has(model));
  if (unpriced.length > 0) logger.warn({ models: unpriced }, 'free-tier models the newest rate card does not price: calls to them get 400 model_not_priced');
  // Encapsulated: the OpenAI error shape, the raw-body parser and the bearers apply to /v1 only.
  app.register(
    async (scope) => {
      installOpenAiErrors(scope);
      keepRawJsonBodies(scope);
      requireGatewayAuth(scope, { gatewayToken: settings.gatewayToken, adminToken: settings.adminToken });
      registerGatewayRoutes(scope, {
        calls,
        operator: new OperatorRepository(db, clock),
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
  });
  return app;
}
