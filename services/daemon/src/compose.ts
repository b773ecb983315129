import { join } from 'node:path';
import type { Clock } from '@platform/kit/clock';
import { repeatEvery } from '@platform/kit/lifecycle';
import { createServiceMetrics, type ServiceMetrics } from '@platform/kit/observability/metrics';
import { type ServiceTracing, tracingOff } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import { buildApp, serviceName, serviceVersion } from './app.ts';
import { ChatService } from './chat/chat-service.ts';
import { MemoryContext } from './chat/memory-context.ts';
import { partialAnswerIntervalMs } from './chat/reply-preview.ts';
import { Transcripts } from './chat/transcripts.ts';
import type { DaemonConfig } from './config.ts';
import { EventBroker } from './events/event-broker.ts';
import { GateDesk } from './gates/gate-desk.ts';
import { type AgentIdentity, loadIdentity } from './identity/agent-identity.ts';
import { IntentBook } from './intents/intent-book.ts';
import { IntentRunner } from './intents/intent-runner.ts';
import { recoverUnfinished } from './intents/recovery.ts';
import { JournalStore } from './journal/journal-store.ts';
import type { DeferredSchemas } from './lazy-schemas.ts';
import { ModelClient } from './llm/model-client.ts';
import { daemonMetrics } from './metrics.ts';
import type { RailContext } from './rail/rail-context.ts';
import { providersFor, ToolCatalogue } from './tools/tool-catalogue.ts';
import { WakeInbox } from './wake/wake-inbox.ts';
import { WakeKeys } from './wake/wake-keys.ts';

const wakePurgeIntervalMs = 6 * 3600 * 1000;

export interface ComposedDaemon {
  app: ReturnType<typeof buildApp>['app'];
  /** The route schemas no request has compiled yet (`compileAll()`). */
  schemas: DeferredSchemas;
  identity: AgentIdentity;
  book: IntentBook;
  runner: IntentRunner;
  broker: EventBroker;
  gates: GateDesk;
  chat: ChatService;
  wakes: WakeInbox;
  tools: ToolCatalogue;
  /** After listening: resumes unfinished intents and wakes (the work a restart must not lose). */
  begin(): Promise<{ resumed: number; wakes: number }>;
  /** Releases what `app.close()` does not: tool connections, the model client's sockets, timers. */
  release(): Promise<void>;
}

/**
 * Everything between the settings and a listening app, shared by main and the tests: identity, journal, broker,
 * rail, chat, wakes and routes. All state is files under DATA_DIR: `journal/`, `conversations/`, `wakes/`, the key.
 */
export async function composeDaemon(
  config: DaemonConfig,
  options: { clock: Clock; logger: Logger; requestShutdown: () => void; identity?: AgentIdentity; metrics?: ServiceMetrics; tracing?: ServiceTracing },
): Promise<ComposedDaemon> {
  const { clock, logger } = options;
  const tracing = options.tracing ?? tracingOff;
  const identity = options.identity ?? loadIdentity({ userId: config.userId, agentKeyHex: config.agentKeyHex, dataDir: config.dataDir });
  const metrics = options.metrics ?? createServiceMetrics(serviceName);
  // The gauges read the book and the broker when scraped, by then both exist.
  const counters = daemonMetrics(metrics, {
    intentsByStatus: () => book.countByStatus(),
    pendingGates: () => book.pendingGates(),
    subscribers: () => broker.subscriberCount,
  });
  const broker = new EventBroker({
    clock,
    heartbeatMs: config.heartbeatMs,
    bufferBytes: config.subscriberBufferBytes,
    maxSubscribers: config.maxSubscribers,
    onDropped: counters.eventDropped,
  });
  const book = new IntentBook(new JournalStore(join(config.dataDir, 'journal'), identity.privateKey, counters.journalAppended), broker, clock);
  await book.load();
  const models = new ModelClient({
    gateway: config.gateway,
    actorDid: identity.did,
    clock,
    timeoutMs: config.modelTimeoutMs,
    retries: config.modelRetries,
    logger,
  });
  const tools = new ToolCatalogue(providersFor(config, identity, logger), { logger, timeoutMs: config.toolTimeoutMs, clock });
  const gates = new GateDesk(book, clock);
  const rail: RailContext = {
    book,
    models,
    tools,
    gates,
    clock,
    logger,
    settings: {
      models: config.models,
      compileConfidence: config.compileConfidence,
      gateTimeoutMs: config.gateTimeoutMs,
      ungated: new Set(config.ungatedTools),
    },
  };
  const runner = new IntentRunner({ book, rail, logger, maxQueued: config.maxQueuedIntents, tracing });
  const transcripts = new Transcripts(join(config.dataDir, 'conversations'), clock, broker);
  await transcripts.init();
  const chat = new ChatService({
    transcripts,
    memory: new MemoryContext(tools, logger),
    models,
    tools,
    runner,
    clock,
    logger,
    executorModel: config.models.executor,
    broker,
    previewIntervalMs: partialAnswerIntervalMs,
  });
  const wakes = new WakeInbox(join(config.dataDir, 'wakes'), chat, clock, logger);
  await wakes.init();
  const wakeKeys = new WakeKeys(config.dataDir, clock);
  await wakeKeys.init();
  const { app, schemas } = buildApp({
    config,
    identity,
    book,
    runner,
    gates,
    broker,
    chat,
    transcripts,
    wakes,
    wakeKeys,
    tools,
    clock,
    version: serviceVersion,
    requestShutdown: options.requestShutdown,
    logger,
    metrics,
    tracing,
  });
  // Shutdown drains before the server closes: the walk stops after its step, waiting requests get their answer.
  app.addHook('preClose', async () => {
    await runner.drain();
    await wakes.settled();
  });
  let stopPurge = () => {};
  return {
    app,
    schemas,
    identity,
    book,
    runner,
    broker,
    gates,
    chat,
    wakes,
    tools,
    async begin() {
      const resumed = await recoverUnfinished(book);
      runner.resume(resumed);
      const pendingWakes = await wakes.resumePending();
      stopPurge = repeatEvery(wakePurgeIntervalMs, () => wakes.purge(), logger, 'wake purge');
      return { resumed: resumed.length, wakes: pendingWakes };
    },
    async release() {
      stopPurge();
      await tools.close();
      models.close();
    },
  };
}
