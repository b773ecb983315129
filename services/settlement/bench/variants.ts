import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Env } from '@platform/kit/config';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import type { Rail, RunResult } from './load-process.ts';
import { type LoadProcess, startLoadProcess } from './load-process.ts';
import { type Cores, measure } from './measure.ts';
import { benchServiceEnv, type SettlementProcess, startSettlementProcess } from './settlement-process.ts';

/*
 * The same service under other settings, each on a fresh database or data folder: front threads on PostgreSQL,
 * embedded PGlite (what `npm start` runs), and the marketplace's hold rail (a signed hold, then a capture), one request
 * at a time and in batches as the marketplace sends it.
 */

export interface Variant {
  name: string;
  engine: 'postgres' | 'pglite';
  /** SETTLEMENT_HTTP_THREADS. */
  threads: number;
  rail: Rail;
  concurrency: number;
}

export interface VariantRun extends Variant {
  result: RunResult;
  cores: Cores;
}

/** A service on a fresh database (or PGlite data folder) and a load generator, for `work`; both stopped and the database dropped after. */
export async function withFreshService<T>(
  options: { adminUrl: string; engine: 'postgres' | 'pglite'; threads?: number; env?: Env },
  work: (run: { service: SettlementProcess; load: LoadProcess; db: TempDatabase | undefined }) => Promise<T>,
): Promise<T> {
  const db = options.engine === 'postgres' ? await createTempDatabase(options.adminUrl) : undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'settlement-bench-run-'));
  let service: SettlementProcess | undefined;
  let load: LoadProcess | undefined;
  try {
    service = await startSettlementProcess({ ...benchServiceEnv(db?.url, dataDir, options.threads), ...options.env });
    load = await startLoadProcess();
    return await work({ service, load, db });
  } finally {
    await load?.ask('close').catch(() => undefined);
    load?.kill();
    await service?.ask('stop').catch(() => undefined);
    service?.kill();
    await sleep(100);
    await db?.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function variantRun(variant: Variant, options: { adminUrl: string; seconds: number; warmUpMs: number; payers: number }): Promise<VariantRun> {
  return withFreshService({ adminUrl: options.adminUrl, engine: variant.engine, threads: variant.threads }, async ({ service, load }) => {
    await load.ask('prepare', {
      url: service.info.url,
      payerCount: options.payers,
      payeeCount: options.payers,
      maxSockets: Math.max(variant.concurrency, 256),
    });
    await load.ask('closedLoop', { concurrency: variant.concurrency, durationMs: options.warmUpMs, rail: variant.rail });
    const measured = await measure(service, () =>
      load.ask('closedLoop', { concurrency: variant.concurrency, durationMs: options.seconds * 1000, rail: variant.rail }),
    );
    console.log(`  ${variant.name}, ${variant.concurrency} in flight: ${Math.round(measured.result.paysPerSecond)}/s`);
    return { ...variant, ...measured };
  });
}
