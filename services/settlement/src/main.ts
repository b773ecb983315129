import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { Ed25519Worker } from '@platform/kit/auth/ed25519-worker';
import { NonceStore } from '@platform/kit/auth/nonce-store';
import { systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { localBuckets } from '@platform/kit/http/rate-limit';
import { repeatEvery, runAsMain, type StartedService, serve } from '@platform/kit/lifecycle';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { tracingEnv } from '@platform/kit/observability/tracing-settings';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import { buildApp, serviceName } from './app.ts';
import { LiveChain } from './chain/live-chain.ts';
import { recordingChain, type SettlementChain } from './chain/settlement-chain.ts';
import { developmentSecret, loadConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { SettlementSchema } from './db/schema.ts';
import { FrontThreads } from './http-front/front-threads.ts';
import { sequencerKey } from './ledger/ledger-key.ts';
import { LogView } from './ledger/log-view.ts';
import { Sequencer } from './ledger/sequencer.ts';
import { settlementMetrics } from './metrics.ts';
import { LedgerReads } from './reads/ledger-reads.ts';
import { readSettlementGauges } from './reads/metric-readings.ts';
import { EventHub } from './stream/event-hub.ts';
import { ledgerEvents } from './stream/event-log.ts';

const noncePurgeIntervalMs = 5 * 60 * 1000;

/** Starts the settlement service: config, database, migrations, sequencer (or standby), stream, HTTP. */
export async function start(env: Env, options: { handleSignals?: boolean } = {}): Promise<StartedService> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, service: serviceName });
  if (config.agentAuthSecret === '')
    logger.warn('SETTLEMENT_AGENT_AUTH_SECRET is empty: using the built-in development secret; not a production configuration');
  const seed = secretFromSettingOrFile(config.sequencerKeyHex, config.dataDir, 'sequencer.key', 'SETTLEMENT_SEQUENCER_KEY');
  const key = sequencerKey(privateKeyFromSeed(seed.hex), config.checkpointOrigin);
  const metrics = createServiceMetrics(serviceName);
  const database = await openDatabase<SettlementSchema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: serviceName, logger, metrics });
  await migrate(database, serviceName, migrations);
  const clock = systemClock;
  // With a node: the vault on chain (deployed here in development when no address is set); without: recording.
  const live =
    config.chain.rpcUrl === ''
      ? undefined
      : await LiveChain.open({
          settings: config.chain,
          dev: config.dev,
          expectedChainId: config.chainIdSet ? config.chainId : undefined,
          db: database.db,
          dataDir: config.dataDir,
          clock: systemClock,
          logger,
        });
  const chain: SettlementChain =
    live ?? recordingChain({ chainId: config.chainId, vaultAddress: config.chain.vaultAddress, tokenAddress: config.chain.tokenAddress }, database.db);
  const log = new LogView();
  const counting = settlementMetrics(metrics, { role: () => sequencer.role, readings: () => readSettlementGauges(database.db, chain, clock) });
  const hub = new EventHub({ source: ledgerEvents(database.db, chain), clock, logger });
  await hub.start((channel, onPayload) => database.listen(channel, onPayload));
  const sequencer = new Sequencer({
    database,
    key,
    clock,
    logger,
    log,
    chain,
    window: config.window,
    maxGroup: config.maxGroup,
    takeoverPollMs: config.takeoverPollMs,
    tickMs: 1_000,
    onCommitted: (headId) => void hub.notify(headId),
    onBatch: () => live?.nudge(),
    halted: () => chain.halted(),
    metrics: counting,
  });
  live?.attach(sequencer);
  const takeToken = localBuckets(config.rates, clock);
  const reads = new LedgerReads({ db: database.db, clock, log, chain, sequencerKey: key.publicKeyHex });
  // Intents' signatures off the sequencer's thread; front threads, when there are some, check them on their own.
  const intentSignatures = config.httpThreads === 0 ? new Ed25519Worker() : undefined;
  const tracing = await startTracing(env, serviceName);
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
    transportToken: config.transportToken,
    agentAuthSecret: config.agentAuthSecret || developmentSecret,
    operatorToken: config.operatorToken,
    dev: config.dev,
    window: config.window,
    holdMaxSeconds: config.holdMaxSeconds,
    rates: config.rates,
    takeToken,
    trustProxy: config.trustProxy,
    metrics,
    metricsToken: config.metricsToken,
    ...(intentSignatures ? { intentSignatures } : {}),
    tracing,
  });
  const listener =
    config.httpThreads === 0
      ? undefined
      : new FrontThreads({
          count: config.httpThreads,
          settings: {
            logLevel: config.logLevel,
            transportToken: config.transportToken,
            agentAuthSecret: config.agentAuthSecret || developmentSecret,
            holdMaxSeconds: config.holdMaxSeconds,
            rates: config.rates,
            trustProxy: config.trustProxy,
            // Each front thread traces as settlement too, with a provider of its own (a thread has its own SDK state).
            tracingEnv: tracingEnv(env),
            countRequests: config.metricsToken !== '',
          },
          app,
          submit: (command) => sequencer.submit(command),
          receipt: (seq) => reads.receipt(seq),
          take: takeToken,
          hub,
          logger,
          // A front thread that stopped and could not be replaced leaves the port served by fewer threads: stop
          // (draining what is in flight) and exit non-zero, so the supervisor restarts the whole process.
          onGiveUp: () => {
            if (options.handleSignals === false) return;
            void running.stop().then(() => process.exit(1));
          },
        });
  // The front threads' HTTP metrics, summed into this thread's at each scrape.
  if (listener) metrics.addThreads(() => listener.threadMetrics());
  const stopNoncePurge = new NonceStore(database.db, clock).purgeEvery(noncePurgeIntervalMs, logger);
  // An intent past its expiry is refused by its signature check anyway, so its nonce no longer needs keeping.
  const stopIntentPurge = repeatEvery(
    noncePurgeIntervalMs,
    () => database.db.deleteFrom('intent_nonces').where('expires_at', '<', clock.now()).execute(),
    logger,
    'intent nonce purge',
  );
  const running = await serve(app, {
    host: config.host,
    port: config.port,
    logger,
    handleSignals: options.handleSignals ?? true,
    listener,
    shutdownSteps: [
      async () => stopNoncePurge(),
      async () => stopIntentPurge(),
      () => hub.stop(),
      async () => live?.stop(),
      () => sequencer.stop(),
      async () => intentSignatures?.close(),
      () => database.close(),
    ],
    tracing,
  });
  sequencer.start();
  logger.info(
    { url: running.url, database: database.location, key: seed.source, sequencer: key.publicKeyHex, httpThreads: config.httpThreads },
    'settlement listening',
  );
  return { ...running, name: serviceName, dataLocation: database.location };
}

if (import.meta.main) runAsMain(serviceName, start);
