import type { AgentKey } from '@platform/client/agent-key';
import { generateAgentKey } from '@platform/client/agent-key';
import { deriveTokenKey } from '@platform/kit/auth/principal-token';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, type OpenDatabaseOptions, openDatabase } from '@platform/kit/db/open-database';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import type { TestEngine } from '@platform/testkit/databases';
import { silentLogger } from '@platform/testkit/databases';
import { ManualClock } from '@platform/testkit/manual-clock';
import type { Migration } from 'kysely/migration';
import { buildApp, serviceName } from '../src/app.ts';
import { loadConfig, type MarketplaceConfig } from '../src/config.ts';
import { migrations } from '../src/db/migrations.ts';
import type { MarketplaceSchema } from '../src/db/schema.ts';
import { createDeveloperAuth, type DeveloperAuth } from '../src/developers/developer-auth.ts';
import { createHosting } from '../src/hosting/hosting.ts';
import type { HostedRunner } from '../src/hosting/runner.ts';
import { loadIdentity } from '../src/identity.ts';
import { marketplaceMetrics } from '../src/metrics.ts';
import { createPayments } from '../src/payments/payments.ts';

export const agentAuthSecret = 'test-marketplace-secret';
export const signingKeyHex = '8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
export const agentKeyHex = '2f'.repeat(32);
export const startTime = '2026-03-01T12:00:00.000Z';

export interface HarnessOptions {
  /** Settings on top of the test defaults (as MARKETPLACE_* variables). */
  env?: Record<string, string>;
  clock?: ManualClock;
  /** Developer authentication in place of the service's own (a test stand-in until the registry's is built). */
  developers?: DeveloperAuth;
  /** A hosted runner in place of the settings' (workerd): a test's own or one shared by a file. */
  runner?: HostedRunner;
  /** Migrations in place of `migrations.ts` (one not registered there yet). */
  migrations?: Record<string, Migration>;
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** A caller: sends `Authorization: Bearer <token>` and `X-Caller-DID`. */
  caller?: { did: string; token: string };
}

/** One marketplace on a fresh database with a manual clock, driven through app.inject. */
export async function startMarketplace(engine: TestEngine, options: HarnessOptions = {}) {
  const fresh = await engine.fresh();
  // As main does: one registry for the database, the payments and the app (served with PLATFORM_METRICS_TOKEN in `env`).
  const metrics = createServiceMetrics(serviceName);
  const database: Database<MarketplaceSchema> = await openDatabase<MarketplaceSchema>({ ...(fresh.options as OpenDatabaseOptions), metrics });
  await migrate(database, serviceName, options.migrations ?? migrations);
  const clock = options.clock ?? new ManualClock(startTime);
  const config: MarketplaceConfig = loadConfig({
    MARKETPLACE_AGENT_AUTH_SECRET: agentAuthSecret,
    MARKETPLACE_SIGNING_KEY: signingKeyHex,
    MARKETPLACE_AGENT_KEY: agentKeyHex,
    MARKETPLACE_DEV: 'true',
    // Tests make many callers and developers from one address on a clock that stands still.
    MARKETPLACE_RATE_AUTH: '1000/100000',
    ...options.env,
  });
  const identity = loadIdentity(config);
  const tokenKey = deriveTokenKey(agentAuthSecret, serviceName);
  // Once per registry, as main does (a restart below keeps them).
  const counters = marketplaceMetrics(metrics, database.db);
  const developers = options.developers ?? createDeveloperAuth({ db: database.db, clock, secret: agentAuthSecret, config });
  /** The service on the database: built at start, and again by restart (the database and its data stay). */
  async function assemble() {
    const forget = { listing: (_id: string) => {} };
    const hosting = createHosting({
      db: database.db,
      clock,
      logger: silentLogger,
      config,
      secret: agentAuthSecret,
      switched: (id) => forget.listing(id),
      ...(options.runner ? { runner: options.runner } : {}),
    });
    await hosting.recover();
    const payments = createPayments({
      db: database.db,
      clock,
      logger: silentLogger,
      config,
      identity,
      hosted: hosting.calls,
      metrics: counters,
    });
    forget.listing = (id) => payments.desk.listings.forget(id);
    const deps = { db: database.db, clock, logger: silentLogger, config, identity, tokenKey, developers, payments, hosting };
    const app = buildApp({ ...deps, ping: () => database.ping(), metrics, metricsToken: config.metricsToken });
    await app.ready();
    return { app, deps, payments, hosting };
  }
  let service = await assemble();

  async function stopService() {
    await service.app.close();
    await service.payments.close();
    // A runner the test handed in is the test's to close (a file shares one across its marketplaces).
    if (options.runner) await service.hosting.logs.flushed();
    else await service.hosting.close();
  }

  async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, callOptions: CallOptions = {}) {
    const headers: Record<string, string> = { ...callOptions.headers };
    if (callOptions.caller) {
      headers.authorization = `Bearer ${callOptions.caller.token}`;
      headers['x-caller-did'] = callOptions.caller.did;
    }
    const response = await service.app.inject({ method, url, headers, ...(callOptions.body === undefined ? {} : { payload: callOptions.body as object }) });
    return {
      status: response.statusCode,
      headers: response.headers,
      // biome-ignore lint/suspicious/noExplicitAny: tests read whichever route's shape they called.
      body: response.json() as any,
    };
  }

  /** Runs the DID handshake for a key (a new one by default): the caller token of `Authorization: Bearer`. */
  async function caller(key: AgentKey = generateAgentKey()): Promise<{ key: AgentKey; did: string; token: string }> {
    const challenge = await call('POST', '/v1/agent/auth/challenge', { body: { did: key.did } });
    const verify = await call('POST', '/v1/agent/auth/verify', {
      body: { did: key.did, public_key: key.publicKeyHex, nonce: challenge.body.data.nonce, signature: key.sign(challenge.body.data.message) },
    });
    if (verify.status !== 200) throw new Error(`handshake failed: ${JSON.stringify(verify.body)}`);
    return { key, did: key.did, token: verify.body.data.token as string };
  }

  async function close() {
    await stopService();
    await database.close();
    await fresh.dispose();
  }

  /** Stops the service and starts it again on the same database, as a process restart would. */
  async function restart() {
    await stopService();
    service = await assemble();
  }

  return {
    get app() {
      return service.app;
    },
    get deps() {
      return service.deps;
    },
    clock,
    database,
    config,
    identity,
    call,
    caller,
    close,
    restart,
  };
}

export type Marketplace = Awaited<ReturnType<typeof startMarketplace>>;
