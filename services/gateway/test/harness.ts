import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, type OpenDatabaseOptions, openDatabase } from '@platform/kit/db/open-database';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { silentLogger, type TestEngine } from '@platform/testkit/databases';
import { type HttpCallInit, httpCall } from '@platform/testkit/http-call';
import { ManualClock } from '@platform/testkit/manual-clock';
import { scrapeMetrics } from '@platform/testkit/metrics-text';
import { sql } from 'kysely';
import OpenAI from 'openai';
import type { Logger } from 'pino';
import { buildApp, meteringSettled } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { migrations } from '../src/db/migrations.ts';
import type { GatewaySchema } from '../src/db/schema.ts';
import { RateCardBook } from '../src/rate-cards/rate-card-book.ts';
import { readRateCardDir } from '../src/rate-cards/rate-card-file.ts';
import { RateCardsRepository } from '../src/rate-cards/rate-cards.repository.ts';
import { DrainSlots } from '../src/streaming/drain-slots.ts';
import { startUpstream, type Upstream } from './upstream.ts';

export const gatewayToken = 'test-gateway-token-5f1c';
export const adminToken = 'test-admin-token-9d2e';
export const upstreamKey = 'sk-test-upstream-key-7a3b';
export const startTime = '2026-03-01T12:00:00.000Z';
/** PLATFORM_METRICS_TOKEN of the test instance: `GET /metrics` behind it. */
export const metricsToken = 'test-metrics-token-4c1d';
export const today = '2026-03-01';

export const models = {
  small: 'accounts/test/models/small',
  large: 'accounts/test/models/large',
  coder: 'accounts/test/models/coder',
  executor: 'accounts/test/models/executor',
  offList: 'accounts/test/models/off-list',
  embed: 'accounts/test/models/embed',
  unpriced: 'accounts/test/models/unpriced',
} as const;

export const rateCardDirs = {
  v1: fileURLToPath(new URL('./fixtures/rate-cards/', import.meta.url)),
  v1AndV2: fileURLToPath(new URL('./fixtures/rate-cards-v2/', import.meta.url)),
};

/** M1–M4 are small, large, coder and executor; one embedding model; 100 output tokens when a call names none. */
export const testEnv: Env = {
  PLATFORM_GATEWAY_TOKEN: gatewayToken,
  GATEWAY_ADMIN_TOKEN: adminToken,
  GATEWAY_UPSTREAM_API_KEY: upstreamKey,
  GATEWAY_MODEL_M1: models.small,
  GATEWAY_MODEL_M2: models.large,
  GATEWAY_MODEL_M3: models.coder,
  GATEWAY_MODEL_M4: models.executor,
  GATEWAY_EMBEDDING_MODELS: models.embed,
  GATEWAY_DEFAULT_MAX_TOKENS: '100',
  GATEWAY_RATE_CARD_DIR: rateCardDirs.v1,
  GATEWAY_UPSTREAM_TIMEOUT_MS: '30000',
  GATEWAY_DRAIN_TIMEOUT_MS: '5000',
  // Longer than any clock move of the ordinary tests; the lease tests set their own.
  GATEWAY_LEASE_TTL_MS: '3600000',
};

export interface GatewayOptions {
  /** Settings over `testEnv`; `GATEWAY_UPSTREAM_URL: ''` means no upstream. */
  env?: Env;
  /** Run beside another gateway: same database, clock and upstream (for other settings on the same data). */
  besides?: { database: Database<GatewaySchema>; clock: ManualClock; upstream: Upstream };
  /**
   * Another instance on the data of `attach` (already migrated), with a connection pool, clock and upstream of its
   * own, as another process would have; nothing is dropped at close.
   */
  attach?: OpenDatabaseOptions;
  logger?: Logger;
}

let actorCount = 0;

/** A fresh DID for each test, so tests share a database without sharing budgets. */
export function newActor(): string {
  actorCount++;
  return `did:platform:tester-${actorCount}:${randomBytes(8).toString('hex')}`;
}

/** One gateway listening on a free port, with its database, a manual clock and the test upstream. */
export async function startGateway(engine: TestEngine, options: GatewayOptions = {}) {
  const { besides, attach } = options;
  const fresh = besides || attach ? undefined : await engine.fresh();
  const databaseOptions = attach ?? fresh?.options ?? { logger: silentLogger };
  const database: Database<GatewaySchema> = besides?.database ?? (await openDatabase<GatewaySchema>(databaseOptions));
  if (fresh) await migrate(database, 'gateway', migrations);
  const clock = besides?.clock ?? new ManualClock(startTime);
  const upstream: Upstream = besides?.upstream ?? (await startUpstream());
  const logger = options.logger ?? silentLogger;
  const config = loadConfig({ ...testEnv, GATEWAY_UPSTREAM_URL: upstream.url, ...options.env });
  const repository = new RateCardsRepository(database.db, clock);
  await repository.publish(readRateCardDir(config.rateCardDir));
  const book = new RateCardBook(repository, logger);
  await book.load();
  const stopFollowing = await book.follow((channel, onPayload) => database.listen(channel, onPayload), 3_600_000);
  const drains = new DrainSlots(config.maxDrains);
  const listen = (channel: string, onPayload: (payload: string) => void) => database.listen(channel, onPayload);
  // The app's own registry, served behind the metrics token (the database's metrics are the kit's, tested there).
  const metrics = createServiceMetrics('gateway');
  const app = buildApp({
    db: database.db,
    databaseKind: database.kind,
    ping: () => database.ping(),
    listen,
    clock,
    logger,
    settings: config,
    book,
    drains,
    metrics,
    metricsToken,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });

  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  /** The official OpenAI client, pointed at the gateway with the platform headers; no retries, so tests see each answer. */
  function client(headers: Record<string, string>, apiKey = gatewayToken): OpenAI {
    return new OpenAI({ baseURL: `${url}/v1`, apiKey, defaultHeaders: headers, maxRetries: 0, timeout: 20_000 });
  }

  /** A plain HTTP call, for what an SDK would hide (raw bodies, missing bearers); the gateway bearer unless told. */
  function http(method: string, path: string, init: HttpCallInit = {}) {
    return httpCall(url, method, path, { ...init, bearer: init.bearer === undefined ? gatewayToken : init.bearer });
  }

  /**
   * Operator routes, read as a human operator would see them: later, once the actor's idle slices are given back and
   * the queued bookings are committed.
   */
  async function admin(method: string, path: string, body?: unknown, bearer: string | null = adminToken) {
    await meteringSettled(app);
    return http(method, `/v1/admin${path}`, { body, bearer });
  }

  /** The actor's counter row for the test day, straight from the database, once the metering has settled (as above). */
  async function spend(actor: string, day = today) {
    await meteringSettled(app);
    const row = await database.db.selectFrom('daily_spend').selectAll().where('actor', '=', actor).where('day', '=', day).executeTakeFirst();
    return { spent: row?.spent_units ?? 0n, reserved: row?.reserved_units ?? 0n, calls: row?.calls ?? 0 };
  }

  /** `GET /metrics` with the metrics bearer (or `authorization` as given, null for none): status and the exposition text. */
  const scrape = (authorization: string | null = `Bearer ${metricsToken}`) => scrapeMetrics(app, authorization);

  async function ledger(actor: string) {
    await meteringSettled(app);
    return database.db.selectFrom('ledger').selectAll().select(sql<string>`day::text`.as('day_text')).where('actor', '=', actor).orderBy('id').execute();
  }

  async function close() {
    const closing = app.close();
    // The test is over: sockets the HTTP client left open (some never send a request) need not wait for the grace period.
    app.server.closeAllConnections();
    await closing;
    await stopFollowing();
    if (besides) return;
    await upstream.close();
    await database.close();
    await fresh?.dispose();
  }

  return { app, url, clock, database, databaseOptions, upstream, book, drains, config, client, http, admin, spend, ledger, scrape, close };
}

export type Gateway = Awaited<ReturnType<typeof startGateway>>;

/** The platform headers of a free-tier call. */
export function callerHeaders(actor: string, slot = 'compiler', extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-platform-actor-did': actor, 'x-platform-slot': slot, ...extra };
}

/** Units of 10^-12 credit for `tokens` at `usdPerMTok` with the fixtures' 0.01 USD per credit: exact, integers only. */
export function unitsFor(tokens: number, usdPerMTok: number): bigint {
  // usd/Mtok ÷ 0.01 usd/credit = credits per Mtok; × 10^12 units ÷ 10^6 tokens = 10^8 units per token per (USD/Mtok).
  return BigInt(tokens) * BigInt(usdPerMTok) * 100_000_000n;
}
