import { type AgentKey, generateAgentKey } from '@platform/client/agent-key';
import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { Ed25519Worker } from '@platform/kit/auth/ed25519-worker';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, type OpenDatabaseOptions, openDatabase } from '@platform/kit/db/open-database';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { encodeIntent, newIntentNonce, type SettlementIntent, signIntent } from '@platform/kit/settlement-intent';
import type { TestEngine } from '@platform/testkit/databases';
import { silentLogger } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { ManualClock } from '@platform/testkit/manual-clock';
import { scrapeMetrics } from '@platform/testkit/metrics-text';
import type { Logger } from 'pino';
import { buildApp } from '../src/app.ts';
import { LiveChain } from '../src/chain/live-chain.ts';
import { recordingChain, type SettlementChain } from '../src/chain/settlement-chain.ts';
import type { ChainSettings, WindowSettings } from '../src/config.ts';
import { migrations } from '../src/db/migrations.ts';
import type { SettlementSchema } from '../src/db/schema.ts';
import { type SequencerKey, sequencerKey } from '../src/ledger/ledger-key.ts';
import { LogView } from '../src/ledger/log-view.ts';
import { Sequencer } from '../src/ledger/sequencer.ts';
import { settlementMetrics } from '../src/metrics.ts';
import { LedgerReads } from '../src/reads/ledger-reads.ts';
import { readSettlementGauges } from '../src/reads/metric-readings.ts';
import { EventHub } from '../src/stream/event-hub.ts';
import { ledgerEvents } from '../src/stream/event-log.ts';

export const agentAuthSecret = 'test-agent-auth-secret';
export const operatorToken = 'test-operator-token';
export const sequencerSeedHex = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
export const startTime = '2026-03-01T12:00:00.000Z';
export const vaultAddress = '0x00000000000000000000000000000000000000a1';
/** PLATFORM_METRICS_TOKEN of the test instance: `GET /metrics` behind it. */
export const metricsToken = 'test-metrics-token';
const lenient = { perSecond: 1_000_000, burst: 1_000_000 };

export interface HarnessOptions {
  transportToken?: string;
  window?: Partial<WindowSettings>;
  rates?: Partial<{ read: { perSecond: number; burst: number }; write: { perSecond: number; burst: number }; auth: { perSecond: number; burst: number } }>;
  dev?: boolean;
  /** Share another instance's database (standby tests); the caller disposes it. */
  databaseOptions?: OpenDatabaseOptions;
  clock?: ManualClock;
  maxGroup?: number;
  /** The sequencer's tick (expiry sweep, window age); long by default so tests decide when it runs. */
  tickMs?: number;
  recentIdempotencyKeys?: number;
  /** Check intents' signatures on a worker thread, as the service process does (inline otherwise). */
  intentWorker?: boolean;
  /** Wraps the sequencer's key, e.g. to make its signing fail. */
  key?: (key: SequencerKey) => SequencerKey;
  /** Where the service logs (silent by default), e.g. to see the alarm it raises. */
  logger?: Logger;
  /** Wire a live chain: the vault on this node (deployed by the service, as in development). */
  chain?: { rpcUrl: string; dataDir: string } & Partial<Omit<ChainSettings, 'rpcUrl'>>;
}

/** The sequencer's EVM key in chain tests (anvil funds it). */
export const evmKeyHex = '59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

async function openChain(
  options: NonNullable<HarnessOptions['chain']>,
  db: Database<SettlementSchema>['db'],
  clock: ManualClock,
  logger: Logger,
): Promise<LiveChain> {
  const settings: ChainSettings = {
    evmKeyHex,
    vaultAddress: null,
    tokenAddress: null,
    vaultFromBlock: 0n,
    confirmations: 1,
    pollMs: 1_000,
    feeBumpSeconds: 60,
    maxFeePerGasWei: 500n * 10n ** 9n,
    forceWithdrawDelaySeconds: 7 * 86_400,
    startTimeoutMs: 5_000,
    ...options,
  };
  return LiveChain.open({ settings, dev: true, expectedChainId: undefined, db, dataDir: options.dataDir, clock, logger });
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  bearer?: string;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** One settlement instance on a fresh database, with a manual clock, driven through app.inject. */
export async function startSettlement(engine: TestEngine, options: HarnessOptions = {}) {
  const fresh = options.databaseOptions ? undefined : await engine.fresh();
  const databaseOptions = options.databaseOptions ?? (fresh?.options as OpenDatabaseOptions);
  // As main.ts wires them: one registry for the app, the database and the sequencer.
  const metrics = createServiceMetrics('settlement');
  const database: Database<SettlementSchema> = await openDatabase<SettlementSchema>({ ...databaseOptions, metrics });
  await migrate(database, 'settlement', migrations);
  const clock = options.clock ?? new ManualClock(startTime);
  const plainKey = sequencerKey(privateKeyFromSeed(sequencerSeedHex), 'platform.settlement/test');
  const key = options.key ? options.key(plainKey) : plainKey;
  const logger = options.logger ?? silentLogger;
  const live = options.chain ? await openChain(options.chain, database.db, clock, logger) : undefined;
  const chain: SettlementChain = live ?? recordingChain({ chainId: 125, vaultAddress, tokenAddress: null }, database.db);
  const window: WindowSettings = { seconds: 60, maxReceipts: 10_000, immediateMicros: 10_000_000_000n, ...options.window };
  const log = new LogView();
  const counting = settlementMetrics(metrics, { role: () => sequencer.role, readings: () => readSettlementGauges(database.db, chain, clock) });
  const hub = new EventHub({ source: ledgerEvents(database.db, chain), clock, logger: silentLogger });
  await hub.start((channel, onPayload) => database.listen(channel, onPayload));
  const sequencer = new Sequencer({
    database,
    key,
    clock,
    logger,
    log,
    chain,
    window,
    maxGroup: options.maxGroup ?? 256,
    takeoverPollMs: 1_000,
    tickMs: options.tickMs ?? 3_600_000,
    ...(options.recentIdempotencyKeys === undefined ? {} : { recentIdempotencyKeys: options.recentIdempotencyKeys }),
    onCommitted: (headId) => void hub.notify(headId),
    onBatch: () => live?.nudge(),
    halted: () => chain.halted(),
    metrics: counting,
  });
  live?.attach(sequencer);
  const reads = new LedgerReads({ db: database.db, clock, log, chain, sequencerKey: key.publicKeyHex });
  const intentSignatures = options.intentWorker ? new Ed25519Worker() : undefined;
  const app = buildApp({
    db: database.db,
    ping: () => database.ping(),
    clock,
    logger,
    sequencer,
    reads,
    hub,
    chain,
    key,
    transportToken: options.transportToken ?? '',
    agentAuthSecret,
    operatorToken,
    dev: options.dev ?? true,
    window,
    holdMaxSeconds: 30 * 86_400,
    rates: { read: lenient, write: lenient, auth: lenient, ...options.rates },
    metrics,
    metricsToken,
    ...(intentSignatures ? { intentSignatures } : {}),
  });
  await app.ready();
  sequencer.start();

  async function call(method: 'GET' | 'POST', url: string, callOptions: CallOptions = {}) {
    const headers: Record<string, string> = { ...callOptions.headers };
    if (callOptions.bearer !== undefined) headers.authorization = `Bearer ${callOptions.bearer}`;
    if (callOptions.token !== undefined) headers['x-ledger-agent'] = callOptions.token;
    const response = await app.inject({
      method,
      url,
      headers,
      ...(callOptions.remoteAddress ? { remoteAddress: callOptions.remoteAddress } : {}),
      ...(callOptions.body === undefined ? {} : { payload: callOptions.body as object }),
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      // biome-ignore lint/suspicious/noExplicitAny: tests read whichever route's data shape they called.
      body: response.json() as { ok: boolean; data?: any; error?: { code: string; message: string; retryable: boolean; [extra: string]: unknown } },
    };
  }

  /** Runs the handshake for a key (a new one by default) and returns it with its principal token. */
  async function agent(key: AgentKey = generateAgentKey()): Promise<{ key: AgentKey; did: string; token: string }> {
    const challenge = await call('POST', '/v1/agent/auth/challenge', { body: { did: key.did } });
    const verify = await call('POST', '/v1/agent/auth/verify', {
      body: { did: key.did, public_key: key.publicKeyHex, nonce: challenge.body.data.nonce, signature: key.sign(challenge.body.data.message) },
    });
    if (verify.status !== 200) throw new Error(`handshake failed: ${JSON.stringify(verify.body)}`);
    return { key, did: key.did, token: verify.body.data.token as string };
  }

  /** A new agent credited through the development faucet. */
  async function fundedAgent(amount: string) {
    const funded = await agent();
    const faucet = await call('POST', '/v1/dev/faucet', { token: funded.token, body: { amount } });
    if (faucet.status !== 200) throw new Error(`faucet failed: ${JSON.stringify(faucet.body)}`);
    // On a busy machine the watcher can need more passes than the faucet waits for (it answers `awaiting_credit`).
    if (faucet.body.data.deposit === null && live)
      await eventually(async () => {
        await live.runPass();
        return (await call('GET', `/v1/account/${funded.did}`)).status === 200;
      }, 'the faucet deposit is credited');
    return funded;
  }

  /** `GET /metrics` with the metrics bearer (or `authorization` as given): status and the exposition text. */
  const scrape = (authorization: string | null = `Bearer ${metricsToken}`) => scrapeMetrics(app, authorization);

  async function waitForRole(role: 'sequencer' | 'standby') {
    await eventually(() => sequencer.role === role, `instance becomes ${role}`);
  }

  async function close() {
    await live?.stop();
    await app.close();
    await intentSignatures?.close();
    await sequencer.stop();
    await database.close();
    await fresh?.dispose();
  }

  if (!options.databaseOptions) await waitForRole('sequencer');
  // A live chain's first pass moves the watcher past the vault's deployment; the second checks the reserve there.
  await live?.runPass();
  await live?.runPass();
  return { app, clock, database, databaseOptions, sequencer, reads, key, hub, live, call, agent, fundedAgent, scrape, waitForRole, close };
}

export type Settlement = Awaited<ReturnType<typeof startSettlement>>;

/** A pay intent signed by `key`, a minute from `now`, with the terms a test changes; its wire form beside them. */
export function signedIntent(key: AgentKey, now: Date, terms: Partial<SettlementIntent> = {}): { terms: SettlementIntent; wire: string } {
  const full: SettlementIntent = {
    version: 1,
    from: key.did,
    to: generateAgentKey().did,
    amount: '5',
    ref: '',
    nonce: newIntentNonce(),
    expiry: new Date(now.getTime() + 60_000).toISOString(),
    purpose: 'pay',
    ...terms,
  };
  return { terms: full, wire: encodeIntent(signIntent(full, key)) };
}
