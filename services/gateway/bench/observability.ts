import type { Env } from '@platform/kit/config';
import {
  cpuPerOperation,
  inTurns,
  type ObservabilitySetup,
  type ObservabilitySlot,
  observabilityEnv,
  observabilitySetups,
  observabilitySideBySide,
  observabilitySlots,
  printObservabilityTable,
  printSideBySideTable,
  type SideBySideRounds,
  scrapeEvery,
  sideBySide,
  slotOf,
  startCountingReceiver,
} from '@platform/testkit/observability-cost';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import { errorCount } from './bench-report.ts';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.ts';
import { type CallRun, type LoadProcess, startLoadProcess } from './load-process.ts';

/*
 * What metrics and tracing cost the gateway (issue 35): gateways on PostgreSQL with durable bookings, each on a
 * database of its own, without either, with /metrics served and scraped every second, and with that and every call
 * traced (a server span and the model call's span, which is its upstream call's client span, with its gen_ai
 * attributes) exported to a local receiver; the most metered calls per second of each at `concurrency` in flight,
 * two processes a setup, measured in turns; then, side by side, a process of each setup (its first and second in
 * turn) at a fixed rate, all at once, each with a load generator of its own, for the µs of CPU a call each adds
 * (testkit observability-cost.ts).
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
  /** How long each gateway is driven, and its database analyzed, before any turn. */
  warmUpSeconds: number;
  rounds: number;
  /** Node flags for every gateway (BENCH_PROFILE's --cpu-prof). */
  execArgv?: string[];
}

export async function benchObservability(load: LoadProcess, settings: ObservabilityBenchSettings): Promise<void> {
  const receiver = await startCountingReceiver();
  const slots = new Map<ObservabilitySlot, { gateway: GatewayProcess; db: TempDatabase }>();
  try {
    for (const slot of observabilitySlots) {
      const db = await createTempDatabase(settings.adminUrl);
      const env = { ...settings.gatewayEnv, DATABASE_URL: db.url, ...observabilityEnv(slot.setup, receiver) };
      slots.set(slot, { db, gateway: await startGatewayProcess(env, settings.execArgv) });
    }
    const scrapers = [...slots].filter(([slot]) => slot.setup !== 'off').map(([, { gateway }]) => scrapeEvery(gateway.info.url));
    console.log(`\nobservability: ${[...slots].map(([slot, { gateway }]) => `${slot.label} pid ${gateway.info.pid}`).join(', ')}; receiver ${receiver.url}`);
    const drive = async (slot: ObservabilitySlot, durationMs: number) => {
      const { gateway } = slots.get(slot) as { gateway: GatewayProcess };
      await load.ask('setup', {
        direct: { url: gateway.info.url, headers: [] },
        gateway: { url: `${gateway.info.url}/v1`, headers: settings.actors },
        maxSockets: Math.max(settings.concurrency, 64),
      });
      return load.ask('closedLoop', { target: 'gateway', body: settings.body, concurrency: settings.concurrency, durationMs });
    };
    const rows = await inTurns(
      settings.rounds,
      // Each gateway's database starts empty: until its tables hold rows and their statistics say so, PostgreSQL plans
      // the metering statements for empty tables, and the budget leases of the bench's actors are not yet granted.
      async (slot) => {
        await drive(slot, settings.warmUpSeconds * 1000);
        await slots.get(slot)?.db.analyze();
      },
      async (slot) => {
        const { gateway } = slots.get(slot) as { gateway: GatewayProcess };
        await drive(slot, 1_000);
        const { result: run, micros: microsPerCall } = await cpuPerCall(gateway, () =>
          load.ask('closedLoop', { target: 'gateway', body: settings.body, concurrency: settings.concurrency, durationMs: settings.turnSeconds * 1000 }),
        );
        if (errorCount(run) > 0) console.log(`  ${slot.label}: ${errorCount(run)} errors (${JSON.stringify(run.errors)})`);
        console.log(`  ${slot.label}: ${Math.round(run.perSecond)} metered calls/s`);
        return { perSecond: run.perSecond, microsCpuPerOp: microsPerCall };
      },
    );
    const side = observabilitySideBySide ? await measureSideBySide(slots, settings) : undefined;
    const scraped = scrapers.map((scraper) => scraper.stop());
    printObservabilityTable('metered calls', rows, {
      spans: receiver.received(),
      scrapes: scraped.reduce((sum, s) => sum + s.scrapes, 0),
      scrapeFailures: scraped.reduce((sum, s) => sum + s.failures, 0),
    });
    if (side) printSideBySideTable('calls', sideRate, side);
  } finally {
    for (const { gateway } of slots.values()) {
      await gateway.ask('stop').catch(() => undefined);
      await gateway.exited.catch(() => undefined);
    }
    for (const { db } of slots.values()) await db.drop().catch(() => undefined);
    await receiver.close();
  }
}

/** A gateway of each setup at this rate, all at once (four of them, with their load generators, on the one machine), for this many rounds of 5 s. */
const sideRate = 1_000;
const sideRounds = 10;

async function measureSideBySide(
  slots: Map<ObservabilitySlot, { gateway: GatewayProcess; db: TempDatabase }>,
  settings: ObservabilityBenchSettings,
): Promise<SideBySideRounds> {
  // A load generator a setup, pointed each round at that round's process of it.
  const loads = new Map<ObservabilitySetup, LoadProcess>();
  try {
    for (const setup of observabilitySetups) loads.set(setup, await startLoadProcess());
    return await sideBySide(sideRounds, async (setup, instance) => {
      const load = loads.get(setup) as LoadProcess;
      const { gateway } = slots.get(slotOf(setup, instance)) as { gateway: GatewayProcess };
      await load.ask('setup', {
        direct: { url: gateway.info.url, headers: [] },
        gateway: { url: `${gateway.info.url}/v1`, headers: settings.actors },
        maxSockets: 64,
      });
      const atRate = (durationMs: number) => load.ask('openLoop', { target: 'gateway', body: settings.body, rate: sideRate, durationMs });
      await atRate(1_000);
      return (await cpuPerCall(gateway, () => atRate(5_000))).micros;
    });
  } finally {
    for (const load of loads.values()) load.kill();
  }
}

/** `work`'s run and the gateway's CPU time over it, in µs a call (answered or failed). */
function cpuPerCall(gateway: GatewayProcess, work: () => Promise<CallRun>): Promise<{ result: CallRun; micros: number }> {
  return cpuPerOperation(
    () => gateway.ask('cpu'),
    work,
    (run) => run.ok + errorCount(run),
  );
}
