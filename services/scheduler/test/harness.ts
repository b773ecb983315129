import { type AgentKey, generateAgentKey } from '@platform/client/agent-key';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import type { TestEngine } from '@platform/testkit/databases';
import { silentLogger } from '@platform/testkit/databases';
import { ManualClock } from '@platform/testkit/manual-clock';
import { scrapeMetrics } from '@platform/testkit/metrics-text';
import { startWakeReceiver, type WakeReceiver } from '@platform/testkit/wake-receiver';
import { AlarmsRepository, alarmsChannel } from '../src/alarms/alarms.repository.ts';
import { buildApp } from '../src/app.ts';
import { migrations } from '../src/db/migrations.ts';
import type { SchedulerSchema } from '../src/db/schema.ts';
import { Dispatcher } from '../src/dispatch/dispatcher.ts';
import { httpWakeCheck } from '../src/dispatch/wake-check.ts';
import { httpWakeDelivery } from '../src/dispatch/wake-delivery.ts';
import { schedulerMetrics } from '../src/metrics.ts';

export const transportToken = 'test-transport-token';
export const agentAuthSecret = 'test-agent-auth-secret';
export const startTime = '2026-03-01T12:00:00.000Z';
/** PLATFORM_METRICS_TOKEN of the test instance: `GET /metrics` behind it. */
export const metricsToken = 'test-metrics-token';

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Transport bearer; defaults to the right one, null sends none. */
  bearer?: string | null;
  headers?: Record<string, string>;
}

/** One scheduler on a fresh database with a manual clock, a real wake receiver and a dispatcher driven by the test. */
export async function startScheduler(engine: TestEngine, options: { transportToken?: string; wakeTimeoutMs?: number; wakeCheck?: boolean } = {}) {
  const fresh = await engine.fresh();
  // As main.ts wires them: one registry for the app, the database and the dispatchers.
  const metrics = createServiceMetrics('scheduler');
  const database: Database<SchedulerSchema> = await openDatabase<SchedulerSchema>({ ...fresh.options, metrics });
  await migrate(database, 'scheduler', migrations);
  const clock = new ManualClock(startTime);
  const bearer = options.transportToken ?? transportToken;
  const receiver = await startWakeReceiver();
  const checkWakeable = options.wakeCheck
    ? httpWakeCheck({ url: receiver.url, token: 'wake-token', timeoutMs: options.wakeTimeoutMs ?? 2_000, clock, logger: silentLogger })
    : undefined;
  const app = buildApp({
    db: database.db,
    ping: () => database.ping(),
    clock,
    logger: silentLogger,
    transportToken: bearer,
    agentAuthSecret,
    metrics,
    metricsToken,
    ...(checkWakeable && { checkWakeable }),
  });
  await app.ready();
  const repository = new AlarmsRepository(database.db, clock);
  const counting = schedulerMetrics(metrics, { alarmsDue: () => repository.countDue() });
  const dispatchers: Dispatcher[] = [];
  const makeDispatcher = (leaseMs = 60_000, dispatcherRepository: AlarmsRepository = repository) => {
    const dispatcher = new Dispatcher({
      repository: dispatcherRepository,
      deliver: httpWakeDelivery({ url: receiver.url, token: 'wake-token', timeoutMs: options.wakeTimeoutMs ?? 2_000 }),
      clock,
      logger: silentLogger,
      onAlarmCreated: (hint) => database.listen(alarmsChannel, hint),
      concurrency: 16,
      leaseMs,
      maxIdleMs: 60_000,
      metrics: counting,
    });
    dispatchers.push(dispatcher);
    return dispatcher;
  };

  async function call(method: 'GET' | 'POST' | 'DELETE', url: string, callOptions: CallOptions = {}) {
    const headers: Record<string, string> = { ...callOptions.headers };
    const presented = callOptions.bearer === undefined ? bearer : callOptions.bearer;
    if (presented) headers.authorization = `Bearer ${presented}`;
    if (callOptions.token !== undefined) headers['x-scheduler-agent'] = callOptions.token;
    const response = await app.inject({ method, url, headers, ...(callOptions.body === undefined ? {} : { payload: callOptions.body as object }) });
    return {
      status: response.statusCode,
      // biome-ignore lint/suspicious/noExplicitAny: tests read whichever route's data shape they called.
      body: response.json() as { ok: boolean; data?: any; error?: { code: string; message: string; retryable: boolean; [member: string]: unknown } },
    };
  }

  /** Runs the handshake for a key (a new one by default) and returns it with its principal token. */
  async function agent(key: AgentKey = generateAgentKey()): Promise<{ key: AgentKey; token: string }> {
    const challenge = await call('POST', '/v1/agent/auth/challenge', { body: { did: key.did } });
    const verify = await call('POST', '/v1/agent/auth/verify', {
      body: { did: key.did, public_key: key.publicKeyHex, nonce: challenge.body.data.nonce, signature: key.sign(challenge.body.data.message) },
    });
    if (verify.status !== 200) throw new Error(`handshake failed: ${JSON.stringify(verify.body)}`);
    return { key, token: verify.body.data.token as string };
  }

  async function close() {
    // A test that failed midway may leave a dispatcher looping; stop it before its database goes.
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.crash()));
    await app.close();
    await receiver.close();
    await database.close();
    await fresh.dispose();
  }

  /** `GET /metrics` with the metrics bearer (or `authorization` as given): status and the exposition text. */
  const scrape = (authorization: string | null = `Bearer ${metricsToken}`) => scrapeMetrics(app, authorization);

  return { app, clock, database, receiver, repository, makeDispatcher, call, agent, scrape, close };
}

export type Scheduler = Awaited<ReturnType<typeof startScheduler>>;
export type { WakeReceiver };
