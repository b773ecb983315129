import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  cpuPerOperation,
  inTurns,
  type ObservabilitySlot,
  observabilityEnv,
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
import { type LoadProcess, type RunResult, startLoadProcess } from './load-process.ts';
import { errorCount } from './measure.ts';
import { benchServiceEnv, type SettlementProcess, startSettlementProcess } from './settlement-process.ts';

/*
 * What metrics and tracing cost settlement (issue 35): services on PostgreSQL, each on a database of its own with its
 * own load generator, without either, with /metrics served and scraped every second, and with that and every request
 * traced (the server span and the group commit it joined) exported to a local receiver; durable pays per second of
 * each at `concurrency` in flight, two processes a setup, measured in turns; then, side by side, a process of each
 * setup (its first and second in turn) at a fixed rate, all at once, for the µs of CPU a pay each adds (testkit
 * observability-cost.ts).
 */

export async function benchObservability(settings: {
  adminUrl: string;
  concurrency: number;
  turnSeconds: number;
  /** How long each service is driven, and its database analyzed, before any turn. */
  warmUpSeconds: number;
  rounds: number;
  payers: number;
}): Promise<void> {
  const receiver = await startCountingReceiver();
  const databases: TempDatabase[] = [];
  const folders: string[] = [];
  const running = new Map<ObservabilitySlot, { service: SettlementProcess; load: LoadProcess; db: TempDatabase }>();
  try {
    for (const slot of observabilitySlots) {
      const db = await createTempDatabase(settings.adminUrl);
      databases.push(db);
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'settlement-bench-observe-'));
      folders.push(dataDir);
      const service = await startSettlementProcess({ ...benchServiceEnv(db.url, dataDir), ...observabilityEnv(slot.setup, receiver) });
      const load = await startLoadProcess();
      await load.ask('prepare', {
        url: service.info.url,
        payerCount: settings.payers,
        payeeCount: settings.payers,
        maxSockets: Math.max(settings.concurrency, 256),
      });
      running.set(slot, { service, load, db });
    }
    const scrapers = [...running].filter(([slot]) => slot.setup !== 'off').map(([, { service }]) => scrapeEvery(service.info.url));
    console.log(
      `\nobservability: ${running.size} services (two each off, metrics, metrics + tracing), each with its own database and load generator; receiver ${receiver.url}`,
    );
    const at = (slot: ObservabilitySlot) => running.get(slot) as { service: SettlementProcess; load: LoadProcess; db: TempDatabase };
    const rows = await inTurns(
      settings.rounds,
      async (slot) => {
        await at(slot).load.ask('closedLoop', { concurrency: settings.concurrency, durationMs: settings.warmUpSeconds * 1000, rail: 'pay' });
        await at(slot).db.analyze();
      },
      async (slot) => {
        const { service, load } = at(slot);
        await load.ask('closedLoop', { concurrency: settings.concurrency, durationMs: 1_000, rail: 'pay' });
        const { result, micros: microsPerPay } = await cpuPerPay(service, () =>
          load.ask('closedLoop', { concurrency: settings.concurrency, durationMs: settings.turnSeconds * 1000, rail: 'pay' }),
        );
        const errors = errorCount(result);
        if (errors > 0) console.log(`  ${slot.label}: ${errors} errors (${JSON.stringify(result.errors)})`);
        console.log(`  ${slot.label}: ${Math.round(result.paysPerSecond)} pays/s`);
        return { perSecond: result.paysPerSecond, microsCpuPerOp: microsPerPay };
      },
    );
    const side = observabilitySideBySide ? await measureSideBySide(running) : undefined;
    const scraped = scrapers.map((scraper) => scraper.stop());
    printObservabilityTable('durable pays', rows, {
      spans: receiver.received(),
      scrapes: scraped.reduce((sum, s) => sum + s.scrapes, 0),
      scrapeFailures: scraped.reduce((sum, s) => sum + s.failures, 0),
    });
    if (side) printSideBySideTable('pays', sideRate, side);
  } finally {
    for (const { service, load } of running.values()) {
      await load.ask('close').catch(() => undefined);
      load.kill();
      await service.ask('stop').catch(() => undefined);
      service.kill();
    }
    for (const db of databases) await db.drop().catch(() => undefined);
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    await receiver.close();
  }
}

/** A service of each setup at this rate, all at once (four of them, each with its load generator), for this many rounds of 5 s. */
const sideRate = 1_000;
const sideRounds = 10;

async function measureSideBySide(running: Map<ObservabilitySlot, { service: SettlementProcess; load: LoadProcess }>): Promise<SideBySideRounds> {
  return sideBySide(sideRounds, async (setup, instance) => {
    const { service, load } = running.get(slotOf(setup, instance)) as { service: SettlementProcess; load: LoadProcess };
    await load.ask('openLoop', { rate: sideRate, durationMs: 1_000 });
    return (await cpuPerPay(service, () => load.ask('openLoop', { rate: sideRate, durationMs: 5_000 }))).micros;
  });
}

/** `work`'s run and the service's CPU time over it, in µs a pay (answered or failed). */
function cpuPerPay(service: SettlementProcess, work: () => Promise<RunResult>): Promise<{ result: RunResult; micros: number }> {
  return cpuPerOperation(
    () => service.ask('cpu'),
    work,
    (result) => result.ok + errorCount(result),
  );
}
