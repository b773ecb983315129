import type { Env } from '@platform/kit/config';
import {
  inTurns,
  type ObservabilitySetup,
  observabilityEnv,
  observabilitySetups,
  printObservabilityTable,
  scrapeEvery,
  startCountingReceiver,
} from '@platform/testkit/observability-cost';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.ts';
import type { LoadProcess } from './load-process.ts';

/*
 * What metrics and tracing cost the gateway (issue 35): three gateways on PostgreSQL with durable bookings, each on a
 * database of its own, without either, with /metrics served and scraped every second, and with that and every call
 * traced (a server span, the upstream call's client span and its gen_ai attributes) exported to a local receiver;
 * the most metered calls per second of each at `concurrency` in flight, measured in turns.
 */

export interface ObservabilityBenchSettings {
  adminUrl: string;
  /** Env every gateway gets (token, upstream, caps), without the database. */
  gatewayEnv: Env;
  /** The headers of the actors the load generator rotates over. */
  actors: Array<Record<string, string>>;
  body: string;
  concurrency: number;
  turnSeconds: number;
  rounds: number;
}

export async function benchObservability(load: LoadProcess, settings: ObservabilityBenchSettings): Promise<void> {
  const receiver = await startCountingReceiver();
  const databases: TempDatabase[] = [];
  const gateways = new Map<ObservabilitySetup, GatewayProcess>();
  try {
    for (const setup of observabilitySetups) {
      const db = await createTempDatabase(settings.adminUrl);
      databases.push(db);
      gateways.set(setup, await startGatewayProcess({ ...settings.gatewayEnv, DATABASE_URL: db.url, ...observabilityEnv(setup, receiver) }));
    }
    const scrapers = [...gateways].filter(([setup]) => setup !== 'off').map(([, gateway]) => scrapeEvery(gateway.info.url));
    console.log(`\nobservability: three gateways (${[...gateways].map(([setup, g]) => `${setup} pid ${g.info.pid}`).join(', ')}), receiver ${receiver.url}`);
    const rows = await inTurns(settings.rounds, async (setup) => {
      const gateway = gateways.get(setup) as GatewayProcess;
      await load.ask('setup', {
        direct: { url: gateway.info.url, headers: [] },
        gateway: { url: `${gateway.info.url}/v1`, headers: settings.actors },
        maxSockets: Math.max(settings.concurrency, 64),
      });
      await load.ask('closedLoop', { target: 'gateway', body: settings.body, concurrency: settings.concurrency, durationMs: 1_000 });
      const before = await gateway.ask('cpu');
      const run = await load.ask('closedLoop', {
        target: 'gateway',
        body: settings.body,
        concurrency: settings.concurrency,
        durationMs: settings.turnSeconds * 1000,
      });
      const after = await gateway.ask('cpu');
      const errors = Object.values(run.errors).reduce((sum, n) => sum + n, 0);
      if (errors > 0) console.log(`  ${setup}: ${errors} errors (${JSON.stringify(run.errors)})`);
      const micros = after.user + after.system - before.user - before.system;
      console.log(`  ${setup}: ${Math.round(run.perSecond)} metered calls/s`);
      return { perSecond: run.perSecond, microsCpuPerOp: micros / Math.max(1, run.ok + errors) };
    });
    const scraped = scrapers.map((scraper) => scraper.stop());
    printObservabilityTable('metered calls', rows, {
      spans: receiver.received(),
      scrapes: scraped.reduce((sum, s) => sum + s.scrapes, 0),
      scrapeFailures: scraped.reduce((sum, s) => sum + s.failures, 0),
    });
  } finally {
    for (const gateway of gateways.values()) {
      await gateway.ask('stop').catch(() => undefined);
      await gateway.exited.catch(() => undefined);
    }
    for (const db of databases) await db.drop().catch(() => undefined);
    await receiver.close();
  }
}
