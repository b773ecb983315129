import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  inTurns,
  type ObservabilitySlot,
  observabilityEnv,
  observabilitySlots,
  printObservabilityTable,
  scrapeEvery,
  startCountingReceiver,
} from '@platform/testkit/observability-cost';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import { type LoadProcess, startLoadProcess } from './load-process.ts';
import { benchServiceEnv, type SettlementProcess, startSettlementProcess } from './settlement-process.ts';

/*
 * What metrics and tracing cost settlement (issue 35): services on PostgreSQL, each on a database of its own with its
 * own load generator, without either, with /metrics served and scraped every second, and with that and every request
 * traced (the server span and the group commit it joined) exported to a local receiver; durable pays per second of
 * each at `concurrency` in flight, two processes a setup, measured in turns (testkit observability-cost.ts).
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
        const before = await service.ask('cpu');
        const result = await load.ask('closedLoop', { concurrency: settings.concurrency, durationMs: settings.turnSeconds * 1000, rail: 'pay' });
        const after = await service.ask('cpu');
        const errors = Object.values(result.errors).reduce((sum, n) => sum + n, 0);
        if (errors > 0) console.log(`  ${slot.label}: ${errors} errors (${JSON.stringify(result.errors)})`);
        console.log(`  ${slot.label}: ${Math.round(result.paysPerSecond)} pays/s`);
        const micros = after.user + after.system - before.user - before.system;
        return { perSecond: result.paysPerSecond, microsCpuPerOp: micros / Math.max(1, result.paysPerSecond * settings.turnSeconds) };
      },
    );
    const scraped = scrapers.map((scraper) => scraper.stop());
    printObservabilityTable('durable pays', rows, {
      spans: receiver.received(),
      scrapes: scraped.reduce((sum, s) => sum + s.scrapes, 0),
      scrapeFailures: scraped.reduce((sum, s) => sum + s.failures, 0),
    });
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
