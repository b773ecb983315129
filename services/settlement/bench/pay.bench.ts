/*
 * The settlement service's pay benchmark, on PostgreSQL: durable pays per second over HTTP with many
 * payers in flight, p50/p99 latency at a fixed 1,000 pays/s, and beside them pgbench's tpcb-like TPS on
 * the same database: one transaction per transfer, the baseline group commit has to beat.
 * Not part of `npm test`.
 * Usage: npm run bench -w services/settlement
 *   BENCH_DATABASE_URL  admin URL (default postgres://postgres@127.0.0.1:5432/postgres); a temp database is made beside it
 *   BENCH_SECONDS       length of each measured run (default 10)
 *   BENCH_CONCURRENCY   pays in flight per throughput run (default 64,256,512,1024; the other settings run at the last)
 *   BENCH_PGBENCH_CLIENTS  pgbench client counts (default 16,32,64)
 *   BENCH_PROFILE       a folder: the service runs with --cpu-prof and writes its .cpuprofile there on stop
 *   BENCH_VARIANTS      0 skips the runs on other settings (front threads, embedded PGlite, the hold rail alone and in batches)
 *   BENCH_CHAIN         0 skips the runs with the vault live
 *   BENCH_HTTP_THREADS  front threads for the main runs (default 0: HTTP on the sequencer's thread)
 *   BENCH_OBSERVE       0 skips what metrics and tracing cost (bench/observability.ts)
 *   BENCH_MAIN          0 skips everything else, for what metrics and tracing cost alone
 * Then the same pays with front threads, on embedded PGlite, and the marketplace's hold rail, each on a fresh database;
 * then with the vault live on a local anvil node (every batch anchored), anchoring gas per batch and deposit-to-credit latency.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { benchPreamble } from '@platform/testkit/bench-machine';
import { type CpuSnapshot, cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { observabilityRounds } from '@platform/testkit/observability-cost';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import pg from 'pg';
import { type ChainLiveResult, chainLiveRun } from './chain-live.ts';
import { type LoadProcess, type RunResult, startLoadProcess } from './load-process.ts';
import { type Cores, cpuAlign, cpuCells, cpuHeader, errorCount, measure, ms } from './measure.ts';
import { benchObservability } from './observability.ts';
import { benchServiceEnv, type SettlementProcess, startSettlementProcess } from './settlement-process.ts';
import { type VariantRun, variantRun } from './variants.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '64,256,512,1024').split(',').map(Number);
const pgbenchClients = (process.env.BENCH_PGBENCH_CLIENTS ?? '16,32,64').split(',').map(Number);
const fixedRate = 1_000;
const warmUpMs = 2_000;
const payerCount = 200;
const payeeCount = 200;
const targets = { paysPerSecond: 5_000, p99Ms: 25, vsPgbench: 3, pglitePaysPerSecond: 2_000 };
const runVariants = process.env.BENCH_VARIANTS !== '0';
const runChain = process.env.BENCH_CHAIN !== '0';
const runObserve = process.env.BENCH_OBSERVE !== '0';
const mainRun = process.env.BENCH_MAIN !== '0';
const pgbenchPath = process.env.PGBENCH ?? '/usr/bin/pgbench';
const profileDir = process.env.BENCH_PROFILE;
const mainThreads = Number(process.env.BENCH_HTTP_THREADS ?? 0);
const run = promisify(execFile);

interface HttpRun extends RunResult {
  concurrency: number;
  cores: Cores;
  writer: Writer;
}
/** The single writer's work in a run, from the receipts: a group commit stamps all its receipts with one `at`. */
interface Writer {
  groupsPerSecond: number;
  meanGroup: number;
  /** Window closes (balance tree + checkpoint) inside the run. */
  closes: number;
}
interface PgbenchRun {
  clients: number;
  tps: number;
  cores: Cores;
}

const cpus = os.cpus();
await benchPreamble('settlement');
console.log(`postgres: ${await describePostgres(adminUrl)}`);

let db: TempDatabase | undefined;
let service: SettlementProcess | undefined;
let load: LoadProcess | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'settlement-bench-'));

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    load?.kill();
    service?.kill();
    // Give the killed service's connections a moment to leave before the FORCE drop.
    await sleep(100);
    await db?.drop().catch((error: unknown) => console.error(`could not drop ${db?.url}: ${(error as Error).message}`));
    rmSync(dataDir, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanup().then(() => process.exit(130));
  });
}

try {
  if (mainRun) await mainRuns();
  if (runObserve)
    await benchObservability({
      adminUrl,
      concurrency: 256,
      turnSeconds: Math.max(3, Math.round(seconds / 2)),
      warmUpSeconds: 10,
      rounds: observabilityRounds,
      payers: payerCount,
    });
} finally {
  await cleanup();
}

/** The pays over HTTP, pgbench beside them, the variants and the chain, and the targets judged. */
async function mainRuns(): Promise<void> {
  db = await createTempDatabase(adminUrl);
  service = await startSettlementProcess(
    benchServiceEnv(db.url, dataDir, mainThreads),
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [],
  );
  load = await startLoadProcess();
  const prepared = await load.ask('prepare', { url: service.info.url, payerCount, payeeCount, maxSockets: Math.max(...concurrencies, 256) });
  console.log(`service ${service.info.url} (pid ${service.process.pid}), load generator pid ${load.info.pid}, database ${new URL(db.url).pathname.slice(1)}`);
  console.log(`prepared ${payerCount} funded payers (handshake + faucet) and ${payeeCount} payees in ${prepared.seconds.toFixed(1)} s`);

  let acknowledged = 0;
  const httpRuns: HttpRun[] = [];
  for (const concurrency of concurrencies) {
    acknowledged += (await load.ask('closedLoop', { concurrency, durationMs: warmUpMs })).ok;
    const from = new Date();
    const measured = await measure(service, () => (load as LoadProcess).ask('closedLoop', { concurrency, durationMs: seconds * 1000 }));
    const writer = await writerWork(db.url, from, new Date());
    acknowledged += measured.result.ok;
    httpRuns.push({ ...measured.result, concurrency, cores: measured.cores, writer });
    console.log(`  ${concurrency} in flight: ${Math.round(measured.result.paysPerSecond)} pays/s, ${errorCount(measured.result)} errors`);
  }
  // An unmeasured warm-up at the fixed rate, as each closed-loop run has one at its concurrency.
  acknowledged += (await load.ask('openLoop', { rate: fixedRate, durationMs: warmUpMs })).ok;
  const fixedFrom = new Date();
  const fixed = await measure(service, () => (load as LoadProcess).ask('openLoop', { rate: fixedRate, durationMs: seconds * 1000 }));
  const fixedWriter = await writerWork(db.url, fixedFrom, new Date());
  acknowledged += fixed.result.ok;
  console.log(`  open loop at ${fixedRate}/s: p99 ${fixed.result.p99.toFixed(1)} ms`);

  const stored = await countTransfers(db.url);
  await load.ask('close');
  await service.ask('stop');
  await service.exited;
  if (profileDir) console.log(`service CPU profile written to ${path.resolve(profileDir)}`);

  const pgbenchRuns = await runPgbench(db.url);

  const bestHttp = httpRuns.reduce((a, b) => (b.paysPerSecond > a.paysPerSecond ? b : a));
  const bestPgbench = pgbenchRuns.reduce((a, b) => (b.tps > a.tps ? b : a));
  printTables(httpRuns, bestHttp, pgbenchRuns, bestPgbench, { ...fixed.result, cores: fixed.cores, writer: fixedWriter });
  console.log(
    `\ndurability check: ${acknowledged} pays acknowledged with 200, ${stored} transfer receipts in settlement.receipts${stored >= acknowledged ? '' : ' (FEWER: acknowledged pays are missing!)'}`,
  );
  const variants = runVariants ? await runVariantsOf(concurrencies.at(-1) ?? 512) : [];
  if (variants.length > 0) printVariantTable(variants, bestPgbench.tps);
  const live = runChain ? await chainLiveRun({ adminUrl, seconds, concurrency: concurrencies.at(-1) ?? 512, warmUpMs, payers: payerCount }) : undefined;
  if (live) printChainTable(live);
  // The service's best configuration on PostgreSQL: HTTP on the sequencer's thread, or front threads.
  const threaded = variants.filter((v) => v.engine === 'postgres' && v.rail === 'pay');
  const best = [...threaded.map((v) => ({ rate: v.result.paysPerSecond, how: `${v.concurrency} in flight, ${v.threads} front threads` }))].reduce(
    (a, b) => (b.rate > a.rate ? b : a),
    {
      rate: bestHttp.paysPerSecond,
      how: `${bestHttp.concurrency} in flight, ${mainThreads > 0 ? `${mainThreads} front threads` : "HTTP on the sequencer's thread"}`,
    },
  );
  const ratio = best.rate / bestPgbench.tps;
  console.log('\ntargets:');
  verdict(`>= ${targets.paysPerSecond} durable pays/s over HTTP`, `${Math.round(best.rate)} pays/s (${best.how})`, best.rate >= targets.paysPerSecond);
  verdict(
    `p99 < ${targets.p99Ms} ms at ${fixedRate} pays/s`,
    `p99 ${fixed.result.p99.toFixed(1)} ms`,
    fixed.result.p99 < targets.p99Ms && errorCount(fixed.result) === 0,
  );
  if (live)
    verdict(
      'pays/s do not drop with the chain live',
      `${(live.pays.paysPerSecond / live.off.paysPerSecond).toFixed(2)}x of the same run without a chain (${Math.round(live.pays.paysPerSecond)} against ${Math.round(live.off.paysPerSecond)})`,
      live.pays.paysPerSecond >= live.off.paysPerSecond * 0.9,
    );
  verdict(
    `>= ${targets.vsPgbench}x pgbench tpcb-like`,
    `${ratio.toFixed(2)}x (${Math.round(best.rate)} pays/s, ${best.how}, against ${Math.round(bestPgbench.tps)} tps at ${bestPgbench.clients} clients)`,
    ratio >= targets.vsPgbench,
  );
  const pglite = variants
    .filter((v) => v.engine === 'pglite')
    .reduce<VariantRun | undefined>((a, b) => (!a || b.result.paysPerSecond > a.result.paysPerSecond ? b : a), undefined);
  if (pglite)
    verdict(
      `>= ${targets.pglitePaysPerSecond} pays/s on embedded PGlite`,
      `${Math.round(pglite.result.paysPerSecond)} pays/s (${pglite.concurrency} in flight, ${pglite.threads} front threads)`,
      pglite.result.paysPerSecond >= targets.pglitePaysPerSecond,
    );
}

/** pgbench -i -s 10, then tpcb-like runs at each client count; CPU sampled inside the run (its backends exit with it). */
async function runPgbench(url: string): Promise<PgbenchRun[]> {
  const target = new URL(url);
  const connection = ['-h', target.hostname, '-p', target.port || '5432', '-U', decodeURIComponent(target.username || 'postgres')];
  const env = { ...process.env, ...(target.password ? { PGPASSWORD: decodeURIComponent(target.password) } : {}) };
  const database = target.pathname.slice(1);
  await run(pgbenchPath, ['-i', '-s', '10', '-q', ...connection, database], { env });
  const runs: PgbenchRun[] = [];
  for (const clients of pgbenchClients) {
    const child = spawn(pgbenchPath, ['-b', 'tpcb-like', '-c', String(clients), '-j', '2', '-T', String(seconds), '-n', ...connection, database], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let from: CpuSnapshot | undefined;
    let to: CpuSnapshot | undefined;
    const samples = (async () => {
      await sleep(1_000);
      from = cpuSnapshot([child.pid]);
      await sleep(Math.max(1, seconds - 2) * 1000);
      to = cpuSnapshot([child.pid]);
    })();
    const code = await exited;
    await samples;
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1];
    if (code !== 0 || tps === undefined) throw new Error(`pgbench -c ${clients} failed (exit ${code}):\n${output}`);
    const { machine, postgres, named } = cpuBetween(from, to);
    const client = named(child.pid);
    runs.push({
      clients,
      tps: Number(tps),
      cores: { service: Number.NaN, sequencer: Number.NaN, postgres, load: client, machine, other: Math.max(0, machine - postgres - client) },
    });
    console.log(`  pgbench ${clients} clients: ${Math.round(Number(tps))} tps`);
  }
  return runs;
}

async function describePostgres(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const setting = async (name: string) => (await client.query<{ value: string }>(`select current_setting('${name}') as value`)).rows[0]?.value;
    return `${await setting('server_version')}, synchronous_commit=${await setting('synchronous_commit')}, fsync=${await setting('fsync')}, shared_buffers=${await setting('shared_buffers')}, max_connections=${await setting('max_connections')}`;
  } finally {
    await client.end();
  }
}

async function writerWork(url: string, from: Date, to: Date): Promise<Writer> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const groups = await client.query<{ pays: number; groups: number }>(
      `select count(*)::int as pays, count(distinct at)::int as groups from settlement.receipts where kind = 'transfer' and at >= $1 and at < $2`,
      [from, to],
    );
    const closes = await client.query<{ n: number }>('select count(*)::int as n from settlement.batches where closed_at >= $1 and closed_at < $2', [from, to]);
    const { pays = 0, groups: count = 0 } = groups.rows[0] ?? {};
    return {
      groupsPerSecond: count / ((to.getTime() - from.getTime()) / 1000),
      meanGroup: count > 0 ? pays / count : Number.NaN,
      closes: closes.rows[0]?.n ?? 0,
    };
  } finally {
    await client.end();
  }
}

async function countTransfers(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>(`select count(*)::int as n from settlement.receipts where kind = 'transfer'`)).rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

function writerCells(w: Writer): string {
  return `${Math.round(w.groupsPerSecond)} | ${ms(w.meanGroup)} | ${w.closes}`;
}

function printTables(
  httpRuns: HttpRun[],
  bestHttp: HttpRun,
  pgbenchRuns: PgbenchRun[],
  bestPgbench: PgbenchRun,
  fixed: RunResult & { cores: Cores; writer: Writer },
): void {
  const baseline = bestPgbench.tps;
  console.log(`\ntransfers per second, best of each (${seconds} s runs; CPU in cores of ${cpus.length})`);
  console.log(`| contender | in flight | transfers/s | vs pgbench | ${cpuHeader} |`);
  console.log(`|---|---:|---:|---:|${cpuAlign}|`);
  const row = (name: string, inFlight: number, rate: number, c: Cores) =>
    console.log(`| ${name} | ${inFlight} | ${Math.round(rate)} | ${(rate / baseline).toFixed(2)}x | ${cpuCells(c)} |`);
  row('settlement pays over HTTP (PostgreSQL)', bestHttp.concurrency, bestHttp.paysPerSecond, bestHttp.cores);
  row('pgbench tpcb-like (one transaction per transfer)', bestPgbench.clients, bestPgbench.tps, bestPgbench.cores);

  console.log('\nevery run');
  console.log(
    `| contender | in flight | transfers/s | vs pgbench | latency p50 ms | p99 ms | max ms | errors | ${cpuHeader} | groups/s | pays/group | window closes |`,
  );
  console.log(`|---|---:|---:|---:|---:|---:|---:|---:|${cpuAlign}|---:|---:|---:|`);
  for (const r of httpRuns)
    console.log(
      `| settlement pays over HTTP | ${r.concurrency} | ${Math.round(r.paysPerSecond)} | ${(r.paysPerSecond / baseline).toFixed(2)}x | ` +
        `${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${errorCount(r)} | ${cpuCells(r.cores)} | ${writerCells(r.writer)} |`,
    );
  for (const r of pgbenchRuns)
    console.log(
      `| pgbench tpcb-like | ${r.clients} | ${Math.round(r.tps)} | ${(r.tps / baseline).toFixed(2)}x | – | – | – | 0 | ${cpuCells(r.cores)} | – | – | – |`,
    );
  console.log(
    'CPU service: the whole service process, of which its sequencer (main) thread; CPU client: the load generator (its own process.cpuUsage) for HTTP runs, the pgbench process for pgbench; other: the machine minus all of these.\n' +
      "groups/s and pays/group: the sequencer's group commits, counted from the receipts (one `at` per group); window closes: batches closed during the run.",
  );

  console.log(`\nlatency at a fixed ${fixedRate} pays/s (open loop, ${seconds} s, from each pay's due time to its answer)`);
  console.log(
    `| contender | achieved pays/s | p50 ms | p99 ms | max ms | errors | client send lag p99 ms | ${cpuHeader} | groups/s | pays/group | window closes |`,
  );
  console.log(`|---|---:|---:|---:|---:|---:|---:|${cpuAlign}|---:|---:|---:|`);
  console.log(
    `| settlement pays over HTTP (PostgreSQL) | ${Math.round(fixed.paysPerSecond)} | ${ms(fixed.p50)} | ${ms(fixed.p99)} | ${ms(fixed.max)} | ${errorCount(fixed)} | ` +
      `${ms(fixed.sendLagP99 ?? Number.NaN)} | ${cpuCells(fixed.cores)} | ${writerCells(fixed.writer)} |`,
  );
  const errorKinds = [...httpRuns.map((r) => r.errors), fixed.errors].flatMap((errors) => Object.entries(errors));
  if (errorKinds.length > 0) {
    const totals = new Map<string, number>();
    for (const [label, n] of errorKinds) totals.set(label, (totals.get(label) ?? 0) + n);
    console.log(`errors by kind: ${[...totals].map(([label, n]) => `${label} x${n}`).join(', ')}`);
  }
}

/** Front threads on PostgreSQL, embedded PGlite with and without them, and the marketplace's hold rail: one fresh database each. */
async function runVariantsOf(topConcurrency: number): Promise<VariantRun[]> {
  const list = [
    { name: 'pays, 2 front threads (PostgreSQL)', engine: 'postgres', threads: 2, rail: 'pay', concurrency: topConcurrency },
    { name: 'pays, embedded PGlite', engine: 'pglite', threads: 0, rail: 'pay', concurrency: 256 },
    { name: 'pays, embedded PGlite, 2 front threads', engine: 'pglite', threads: 2, rail: 'pay', concurrency: 256 },
    { name: 'hold rail: signed hold + capture (PostgreSQL)', engine: 'postgres', threads: 0, rail: 'holdCapture', concurrency: 64 },
    { name: 'hold rail in batches, as the marketplace sends it (PostgreSQL)', engine: 'postgres', threads: 0, rail: 'holdCaptureBatched', concurrency: 64 },
  ] as const;
  const runs: VariantRun[] = [];
  for (const variant of list) runs.push(await variantRun(variant, { adminUrl, seconds, warmUpMs, payers: payerCount }));
  return runs;
}

function printVariantTable(runs: VariantRun[], pgbenchTps: number): void {
  console.log(`\nother settings (${seconds} s each, a fresh database or data folder each; the hold rail counts calls: two writes each)`);
  console.log(`| contender | in flight | per second | vs pgbench | p50 ms | p99 ms | errors | ${cpuHeader} |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|${cpuAlign}|`);
  for (const r of runs)
    console.log(
      `| ${r.name} | ${r.concurrency} | ${Math.round(r.result.paysPerSecond)} | ${(r.result.paysPerSecond / pgbenchTps).toFixed(2)}x | ${ms(r.result.p50)} | ${ms(r.result.p99)} | ${errorCount(r.result)} | ${cpuCells(r.cores)} |`,
    );
  const errors = runs.flatMap((r) => Object.entries(r.result.errors).map(([label, n]) => `${r.name}: ${label} x${n}`));
  if (errors.length > 0) console.log(`errors: ${errors.join(', ')}`);
}

function verdict(target: string, measured: string, met: boolean): void {
  console.log(`  ${met ? 'met    ' : 'NOT met'}  ${target}: ${measured}`);
}

function printChainTable(live: ChainLiveResult): void {
  console.log(
    `\nwith the vault live on a local anvil node (every batch anchored while the pays go on; ${seconds} s each, fresh databases, one after the other)`,
  );
  console.log('| contender | in flight | pays/s | vs chain off | p50 ms | p99 ms | errors | batches anchored |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  const row = (name: string, r: RunResult, anchored: string) =>
    console.log(
      `| ${name} | ${concurrencies.at(-1)} | ${Math.round(r.paysPerSecond)} | ${(r.paysPerSecond / live.off.paysPerSecond).toFixed(2)}x | ${ms(r.p50)} | ${ms(r.p99)} | ${errorCount(r)} | ${anchored} |`,
    );
  row('settlement, chain off (recording)', live.off, '–');
  row('settlement, chain live', live.pays, String(live.anchored));
  console.log(`anchoring gas per batch: mean ${Math.round(live.gas.mean)}, min ${live.gas.min}, max ${live.gas.max} (${live.anchored} batches)`);
  const d = live.depositToCredit;
  console.log(
    `deposit to credit (${d.samples} vault deposits, watcher polling every ${d.pollMs} ms, 1 confirmation): from send p50 ${ms(d.fromSend.p50)} ms, max ${ms(d.fromSend.max)} ms; from the mined receipt p50 ${ms(d.fromMined.p50)} ms, max ${ms(d.fromMined.max)} ms`,
  );
}
