import type { Clock } from '@platform/kit/clock';
import { createJsonClient } from '@platform/kit/http/json-client';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MarketplaceConfig } from '../config.ts';
import type { MarketplaceSchema } from '../db/schema.ts';
import type { HostedCalls } from '../hosting/hosted-calls.ts';
import { guardedClient, guardedLookup } from '../http/ssrf.ts';
import type { MarketplaceIdentity } from '../identity.ts';
import { type MarketplaceMetrics, marketplaceMetrics } from '../metrics.ts';
import { CallLedger } from './call-ledger.ts';
import { InvocationsRepository } from './invocations.repository.ts';
import { InvokeDesk } from './invoke-desk.ts';
import { Payouts } from './payouts.ts';
import { Quotes } from './quotes.ts';
import { Receipts } from './receipts.ts';
import { SettlementGateway } from './settlement-gateway.ts';
import { Signatures } from './signatures.ts';
import { Sweep } from './sweep.ts';
import { TabDesk } from './tab-desk.ts';
import { Tabs } from './tabs.ts';

/** Everything that moves money, wired once per process. */
export interface Payments {
  settlement: SettlementGateway;
  quotes: Quotes;
  desk: InvokeDesk;
  tabs: Tabs;
  tabDesk: TabDesk;
  ledger: CallLedger;
  receipts: Receipts;
  payouts: Payouts;
  sweep: Sweep;
  /** Runs the sweep every `sweepSeconds` until stopped (returns the stopper). */
  startSweeping(): () => Promise<void>;
  /** Waits for the call ledger's last group, drops the kept-alive connections to settlement and providers, stops the signing thread. */
  close(): Promise<void>;
}

export function createPayments(deps: {
  db: Kysely<MarketplaceSchema>;
  clock: Clock;
  logger: Logger;
  config: MarketplaceConfig;
  identity: MarketplaceIdentity;
  hosted: HostedCalls;
  /** Counted here (main.ts makes them on the service's registry); absent, a registry of their own nobody reads. */
  metrics?: MarketplaceMetrics;
}): Payments {
  const { db, clock, logger, config, identity } = deps;
  const metrics = deps.metrics ?? marketplaceMetrics(createServiceMetrics('marketplace'), db);
  const settlementClient = createJsonClient({ maxSockets: 256, timeoutMs: 15_000 });
  const settlement = new SettlementGateway({ baseUrl: config.settlementUrl, ledgerToken: config.ledgerToken, agent: identity.agent, client: settlementClient });
  // Providers are the developers' servers: names resolving to private addresses are refused unless allowed.
  const providerClient = createJsonClient({
    maxSockets: 512,
    timeoutMs: config.providerTimeoutMs,
    maxAnswerBytes: 4 * 1024 * 1024,
    lookup: guardedLookup(config.allowPrivateEndpoints),
  });
  const providers = guardedClient(providerClient, config.allowPrivateEndpoints);
  const quotes = new Quotes({ db, clock, signer: identity.signer, chainId: config.eip712ChainId, ttlSeconds: config.quoteTtlSeconds });
  const tabs = new Tabs({ db, clock, logger, settlement, settings: { paymentTtlSeconds: config.paymentTtlSeconds, settlementUrl: config.settlementUrl } });
  const ledger = new CallLedger(db, logger, metrics);
  const invocations = new InvocationsRepository(db);
  const signatures = new Signatures(identity.agent);
  const tabDesk = new TabDesk({ db, clock, identity, tabs, ledger, invocations, signatures });
  const desk = new InvokeDesk({
    db,
    clock,
    logger,
    settlement,
    providers,
    hosted: deps.hosted,
    signatures,
    quotes,
    invocations,
    ledger,
    tabs: tabDesk,
    metrics,
    settings: { providerTimeoutMs: config.providerTimeoutMs, paymentTtlSeconds: config.paymentTtlSeconds, settlementUrl: config.settlementUrl },
  });
  const receipts = new Receipts({ db, invocations, signer: identity.signer, chainId: config.eip712ChainId, settlementUrl: config.settlementUrl });
  const payouts = new Payouts({ db, clock, logger, settlement });
  const sweep = new Sweep({ clock, logger, settlement, invocations, tabs, ledger, payouts, metrics, providerTimeoutMs: config.providerTimeoutMs });
  function startSweeping() {
    let running: Promise<unknown> = sweep.runOnce().catch((error) => logger.error({ err: error }, 'sweep failed'));
    const timer = setInterval(() => {
      running = running.then(() => sweep.runOnce().catch((error) => logger.error({ err: error }, 'sweep failed')));
    }, config.sweepSeconds * 1000);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await running;
      await ledger.flushed();
    };
  }
  async function close() {
    await ledger.flushed();
    await Promise.all([settlementClient.close(), providerClient.close(), signatures.close()]);
  }
  return { settlement, quotes, desk, tabs, tabDesk, ledger, receipts, payouts, sweep, startSweeping, close };
}
