/*
 * The gateway's benchmark: the same client calls the local upstream directly and through the gateway, in the same
 * run. Added latency at a fixed 1,000 calls/s (open loop), the most metered calls per second (closed loop), and for
 * streams the added time to first byte and how much later each chunk arrives. Every process on its own: upstream,
 * gateway, load generator, PostgreSQL. Not part of `npm test`.
 * Usage: npm run bench -w services/gateway
 *   BENCH_DATABASE_URL  admin URL (default postgres://postgres@127.0.0.1:5432/postgres); a temp database is made beside it
 *   BENCH_SECONDS       length of each measured run (default 10)
 *   BENCH_CONCURRENCY   calls in flight for the throughput runs (default 32,64,128,256)
 *   BENCH_VARIANTS      also run these shorter variants (default sync,pglite): PostgreSQL with GATEWAY_ASYNC_COMMIT=true, PGlite
 *   BENCH_PROFILE       a folder: the gateway runs with --cpu-prof and writes its .cpuprofile there on stop
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultModelIds } from '@platform/kit/model-labels';
import { benchPreamble } from '@platform/testkit/bench-machine';
import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import pg from 'pg';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.ts';
import { type CallRun, type LoadProcess, type StreamRun, startLoadProcess, type Target } from './load-process.ts';
import { startUpstreamProcess, type UpstreamProcess } from './upstream-process.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '32,64,128,256').split(',').map(Number);
const variants = (process.env.BENCH_VARIANTS ?? 'sync,pglite').split(',');
const profileDir = process.env.BENCH_PROFILE;
const fixedRate = 1_000;
const actorCount = 1_000;
const streamCount = 300;
const streamConcurrency = 30;
const upstreamSettings = { chunks: 20, chunkIntervalMs: 5 };
const targets = { addedP50Ms: 1, addedP99Ms: 5, meteredPerSecond: 3_000, chunkAddedMs: 1 };
const token = 'bench-gateway-token';
const messages = [{ role: 'user', content: 'Say hello in five words.' }];
const body = JSON.stringify({ model: defaultModelIds.M1, messages, max_tokens: 16 });
const streamBody = JSON.stringify({ model: defaultModelIds.M1, messages, max_tokens: 16, stream: true });

interface Cores {
  gateway: number;
  postgres: number;
  machine: number;
}
interface EngineResult {
  engine: string;
  fixed: { direct: CallRun; gateway: CallRun };
  /** One call at a time (closed loop of 1): the added latency with no queueing anywhere. */
  serial: { direct: CallRun; gateway: CallRun };
  max: Array<{ concurrency: number; run: CallRun; cores: Cores }>;
  directMax: CallRun;
  streams?: { direct: StreamRun; gateway: StreamRun };
}

const cpus = os.cpus();
await benchPreamble('gateway');
console.log(`postgres: ${await describePostgres(adminUrl)}`);

let upstream: UpstreamProcess | undefined;
let load: LoadProcess | undefined;
let gateway: GatewayProcess | undefined;
let db: TempDatabase | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
const results: EngineResult[] = [];

try {
  upstream = await startUpstreamProcess(upstreamSettings);
  load = await startLoadProcess();
  db = await createTempDatabase(adminUrl);
  results.push(await runEngine('PostgreSQL', { DATABASE_URL: db.url }, { databaseUrl: db.url, full: true }));
  if (variants.includes('sync')) {
    const syncDb = await createTempDatabase(adminUrl);
    try {
      const label = 'PostgreSQL, GATEWAY_ASYNC_COMMIT=true';
      results.push(await runEngine(label, { DATABASE_URL: syncDb.url, GATEWAY_ASYNC_COMMIT: 'true' }, { databaseUrl: syncDb.url, full: false }));
    } finally {
      await sleep(100);
      await syncDb.drop();
    }
  }
  if (variants.includes('pglite')) results.push(await runEngine('PGlite', { DATA_DIR: path.join(dataDir, 'pglite') }, { databaseUrl: undefined, full: false }));
  printTables(results);
} finally {
  load?.kill();
  gateway?.kill();
  upstream?.kill();
  await sleep(100);
  await db?.drop().catch((error: unknown) => console.error(`could not drop the temp database: ${(error as Error).message}`));
  rmSync(dataDir, { recursive: true, force: true });
}

/** One gateway configuration; `full` runs every concurrency and the streams, the others a shorter subset. */
async function runEngine(
  engine: string,
  databaseEnv: Record<string, string>,
  options: { databaseUrl: string | undefined; full: boolean },
): Promise<EngineResult> {
  const { databaseUrl, full } = options;
  const up = upstream as UpstreamProcess;
  const gen = load as LoadProcess;
  gateway = await startGatewayProcess(
    {
      ...databaseEnv,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      PLATFORM_GATEWAY_TOKEN: token,
      GATEWAY_UPSTREAM_URL: up.info.url,
      GATEWAY_UPSTREAM_API_KEY: 'sk-bench-upstream',
      GATEWAY_DAILY_CAP_CREDIT: '1000000',
    },
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [],
  );
  const actors = Array.from({ length: actorCount }, (_, i) => ({
    'content-type': 'application/json',
    authorization: `Bearer ${token}`,
    'x-platform-actor-did': `did:platform:bench-${i}:${i.toString(16).padStart(16, '0')}`,
    'x-platform-slot': 'compiler',
  }));
  await gen.ask('setup', {
    direct: { url: up.info.url, headers: [{ 'content-type': 'application/json', authorization: 'Bearer sk-bench-upstream' }] },
    gateway: { url: `${gateway.info.url}/v1`, headers: actors },
    maxSockets: Math.max(...concurrencies, 64),
  });
  console.log(`\n${engine}: gateway ${gateway.info.url} (pid ${gateway.info.pid}), upstream pid ${up.info.pid}, load generator pid ${gen.info.pid}`);
  const runSeconds = full ? seconds : Math.max(3, Math.round(seconds / 2));
  for (const target of ['direct', 'gateway'] as Target[]) await gen.ask('closedLoop', { target, body, concurrency: 32, durationMs: 2_000 });

  const serial = {
    direct: await gen.ask('closedLoop', { target: 'direct', body, concurrency: 1, durationMs: 3_000 }),
    gateway: await gen.ask('closedLoop', { target: 'gateway', body, concurrency: 1, durationMs: 3_000 }),
  };
  const fixed = {
    direct: await gen.ask('openLoop', { target: 'direct', body, rate: fixedRate, durationMs: runSeconds * 1000 }),
    gateway: await gen.ask('openLoop', { target: 'gateway', body, rate: fixedRate, durationMs: runSeconds * 1000 }),
  };
  console.log(
    `  ${fixedRate}/s: direct p50 ${ms(fixed.direct.latencies.p50)} p99 ${ms(fixed.direct.latencies.p99)}; gateway p50 ${ms(fixed.gateway.latencies.p50)} p99 ${ms(fixed.gateway.latencies.p99)}`,
  );
  const max: EngineResult['max'] = [];
  for (const concurrency of full ? concurrencies : concurrencies.slice(-2)) {
    const measured = await measure(() => gen.ask('closedLoop', { target: 'gateway', body, concurrency, durationMs: runSeconds * 1000 }));
    max.push({ concurrency, ...measured });
    console.log(`  ${concurrency} in flight: ${Math.round(measured.run.perSecond)} metered calls/s, ${errorCount(measured.run)} errors`);
  }
  const best = max.reduce((a, b) => (b.run.perSecond > a.run.perSecond ? b : a));
  const directMax = await gen.ask('closedLoop', { target: 'direct', body, concurrency: best.concurrency, durationMs: runSeconds * 1000 });
  let streams: EngineResult['streams'];
  if (full) {
    streams = {
      direct: await gen.ask('streams', { target: 'direct', body: streamBody, count: streamCount, concurrency: streamConcurrency }),
      gateway: await gen.ask('streams', { target: 'gateway', body: streamBody, count: streamCount, concurrency: streamConcurrency }),
    };
  }
  await gateway.ask('stop');
  await gateway.exited;
  if (databaseUrl) {
    const served = fixed.gateway.ok + max.reduce((sum, m) => sum + m.run.ok, 0) + (streams?.gateway.streams ?? 0);
    const rows = await ledgerRows(databaseUrl);
    // Warm-up calls and answers that landed after a run's window are debited too, so the ledger holds at least as many.
    console.log(`  metering check: ${rows} ledger rows for at least ${served} counted gateway answers${rows >= served ? '' : ' (FEWER ROWS THAN ANSWERS!)'}`);
  }
  return { engine, fixed, serial, max, directMax, ...(streams ? { streams } : {}) };
}

async function measure(work: () => Promise<CallRun>): Promise<{ run: CallRun; cores: Cores }> {
  const gw = gateway as GatewayProcess;
  const before = await gw.ask('cpu');
  const from = cpuSnapshot();
  const run = await work();
  const to = cpuSnapshot();
  const after = await gw.ask('cpu');
  const wallMs = (to?.at ?? 0) - (from?.at ?? 0);
  const { machine, postgres } = cpuBetween(from, to);
  const gatewayCores = wallMs > 0 ? (after.user + after.system - before.user - before.system) / 1000 / wallMs : Number.NaN;
  return { run, cores: { gateway: gatewayCores, postgres, machine } };
}

function printTables(all: EngineResult[]): void {
  console.log(`\nnon-streaming calls at a fixed ${fixedRate}/s (open loop, latency from each call's due time to its last byte), ms`);
  console.log('| database | direct p50 | direct p99 | gateway p50 | gateway p99 | added p50 | added p99 | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of all) {
    const { direct, gateway: through } = r.fixed;
    console.log(
      `| ${r.engine} | ${ms(direct.latencies.p50)} | ${ms(direct.latencies.p99)} | ${ms(through.latencies.p50)} | ${ms(through.latencies.p99)} | ` +
        `**${ms(through.latencies.p50 - direct.latencies.p50)}** | **${ms(through.latencies.p99 - direct.latencies.p99)}** | ${errorCount(through)} |`,
    );
  }
  console.log('\none call at a time (closed loop of 1, 3 s), ms');
  console.log('| database | direct p50 | direct p99 | gateway p50 | gateway p99 | added p50 | added p99 |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of all) {
    const { direct, gateway: through } = r.serial;
    console.log(
      `| ${r.engine} | ${ms(direct.latencies.p50)} | ${ms(direct.latencies.p99)} | ${ms(through.latencies.p50)} | ${ms(through.latencies.p99)} | ` +
        `${ms(through.latencies.p50 - direct.latencies.p50)} | ${ms(through.latencies.p99 - direct.latencies.p99)} |`,
    );
  }
  console.log(`\nmost metered calls per second (closed loop; CPU in cores of ${cpus.length})`);
  console.log('| database | in flight | calls/s | vs direct | p50 ms | p99 ms | errors | CPU gateway | CPU postgres | CPU machine |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of all) {
    for (const m of r.max)
      console.log(
        `| ${r.engine} | ${m.concurrency} | ${Math.round(m.run.perSecond)} | ${(m.run.perSecond / r.directMax.perSecond).toFixed(2)}x | ${ms(m.run.latencies.p50)} | ${ms(m.run.latencies.p99)} | ` +
          `${errorCount(m.run)} | ${cores(m.cores.gateway)} | ${cores(m.cores.postgres)} | ${cores(m.cores.machine)} |`,
      );
    const best = r.max.reduce((a, b) => (b.run.perSecond > a.run.perSecond ? b : a));
    console.log(
      `| ${r.engine}: upstream direct, same client | ${best.concurrency} | ${Math.round(r.directMax.perSecond)} | 1.00x | ${ms(r.directMax.latencies.p50)} | ${ms(r.directMax.latencies.p99)} | ${errorCount(r.directMax)} | – | – | – |`,
    );
  }
  const streamed = all.find((r) => r.streams);
  if (streamed?.streams) {
    const { direct, gateway: through } = streamed.streams;
    console.log(
      `\nstreams (${streamCount}, ${streamConcurrency} at a time; ${upstreamSettings.chunks} chunks ${upstreamSettings.chunkIntervalMs} ms apart; ${streamed.engine}), ms`,
    );
    console.log('| measure | direct p50 | direct p99 | gateway p50 | gateway p99 | added p50 | added p99 |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    console.log(
      `| time to first byte | ${ms(direct.ttfb.p50)} | ${ms(direct.ttfb.p99)} | ${ms(through.ttfb.p50)} | ${ms(through.ttfb.p99)} | **${ms(through.ttfb.p50 - direct.ttfb.p50)}** | **${ms(through.ttfb.p99 - direct.ttfb.p99)}** |`,
    );
    console.log(
      `| chunk delay (upstream write → client read) | ${ms(direct.chunkDelay.p50)} | ${ms(direct.chunkDelay.p99)} | ${ms(through.chunkDelay.p50)} | ${ms(through.chunkDelay.p99)} | ` +
        `**${ms(through.chunkDelay.p50 - direct.chunkDelay.p50)}** | **${ms(through.chunkDelay.p99 - direct.chunkDelay.p99)}** |`,
    );
    console.log(`stream errors: direct ${direct.errors}, gateway ${through.errors}`);
  }
  const postgres = all.find((r) => r.engine === 'PostgreSQL');
  if (!postgres) return;
  const addedP50 = postgres.fixed.gateway.latencies.p50 - postgres.fixed.direct.latencies.p50;
  const addedP99 = postgres.fixed.gateway.latencies.p99 - postgres.fixed.direct.latencies.p99;
  const best = Math.max(...postgres.max.map((m) => m.run.perSecond));
  console.log('\ntargets (PostgreSQL):');
  verdict(
    `added p50 < ${targets.addedP50Ms} ms at ${fixedRate}/s`,
    `${ms(addedP50)} ms`,
    addedP50 < targets.addedP50Ms && errorCount(postgres.fixed.gateway) === 0,
  );
  verdict(
    `added p99 < ${targets.addedP99Ms} ms at ${fixedRate}/s`,
    `${ms(addedP99)} ms`,
    addedP99 < targets.addedP99Ms && errorCount(postgres.fixed.gateway) === 0,
  );
  verdict(`>= ${targets.meteredPerSecond} metered calls/s`, `${Math.round(best)} calls/s`, best >= targets.meteredPerSecond);
  if (postgres.streams) {
    const added = postgres.streams.gateway.chunkDelay.p50 - postgres.streams.direct.chunkDelay.p50;
    const added99 = postgres.streams.gateway.chunkDelay.p99 - postgres.streams.direct.chunkDelay.p99;
    verdict(
      `chunks forwarded within ${targets.chunkAddedMs} ms of arrival`,
      `added p50 ${ms(added)} ms, p99 ${ms(added99)} ms`,
      added99 < targets.chunkAddedMs,
    );
  }
}

function verdict(target: string, measured: string, met: boolean): void {
  console.log(`  ${met ? 'met    ' : 'NOT met'}  ${target}: ${measured}`);
}

function errorCount(run: CallRun): number {
  return Object.values(run.errors).reduce((sum, n) => sum + n, 0);
}

function ms(value: number): string {
  return Number.isNaN(value) ? '–' : value.toFixed(2);
}

function cores(value: number): string {
  return Number.isNaN(value) ? '–' : value.toFixed(2);
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function describePostgres(url: string): Promise<string> {
  return withClient(url, async (client) => {
    const setting = async (name: string) => (await client.query<{ value: string }>('select current_setting($1) as value', [name])).rows[0]?.value;
    return `${await setting('server_version')}, synchronous_commit=${await setting('synchronous_commit')}, fsync=${await setting('fsync')}, shared_buffers=${await setting('shared_buffers')}`;
  });
}

function ledgerRows(url: string): Promise<number> {
  return withClient(url, async (client) => (await client.query<{ n: number }>('select count(*)::int as n from gateway.ledger')).rows[0]?.n ?? 0);
}
