/*
 * The gateway's benchmark: the same client calls the local upstream directly and through the gateway, in the same
 * run. Added latency at a fixed 1,000 calls/s (open loop), the most metered calls per second (closed loop), and for
 * streams the added time to first byte and how much later each chunk arrives. Every process on its own: upstream,
 * gateway, load generator, PostgreSQL. Not part of `npm test`.
 * Usage: npm run bench -w services/gateway
 *   BENCH_DATABASE_URL  admin URL (default postgres://postgres@127.0.0.1:5432/postgres); a temp database is made beside it
 *   BENCH_SECONDS       length of each measured run (default 10)
 *   BENCH_CONCURRENCY   calls in flight for the throughput runs (default 32,64,128,256)
 *   BENCH_VARIANTS      also run these shorter variants (default async,pglite,observe): PostgreSQL with GATEWAY_ASYNC_COMMIT=true,
 *                       PGlite, and what metrics and tracing cost (bench/observability.ts)
 *   BENCH_PROFILE       a folder: the gateway runs with --cpu-prof and writes its .cpuprofile there on stop
 *   BENCH_PEERS         peer gateways run through the same phases after the PostgreSQL run (default portkey; none)
 *   BENCH_MAIN          0: skip the full PostgreSQL run (and with it the peers' comparison), for a variant alone
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '@platform/kit/db/open-database';
import { defaultModelIds } from '@platform/kit/model-labels';
import { benchPreamble } from '@platform/testkit/bench-machine';
import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { silentLogger } from '@platform/testkit/databases';
import { observabilityRounds } from '@platform/testkit/observability-cost';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import pg from 'pg';
import type { GatewaySchema } from '../src/db/schema.ts';
import { type EngineResult, errorCount, ms, printReport, type Usage } from './bench-report.ts';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.ts';
import { type CallRun, type LoadProcess, startLoadProcess, type Target } from './load-process.ts';
import { benchObservability } from './observability.ts';
import { benchPortkey, type PeerPhases } from './peers/portkey.ts';
import { printPortkeyComparison } from './peers/portkey-report.ts';
import { startUpstreamProcess, type UpstreamProcess } from './upstream-process.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '32,64,128,256').split(',').map(Number);
const variants = (process.env.BENCH_VARIANTS ?? 'async,pglite,observe').split(',');
const profileDir = process.env.BENCH_PROFILE;
const mainRun = process.env.BENCH_MAIN !== '0';
const peers = mainRun ? (process.env.BENCH_PEERS ?? 'portkey').split(',') : [];
const fixedRate = 1_000;
const actorCount = 1_000;
const streamCount = 300;
const streamConcurrency = 30;
const upstreamSettings = { chunks: 20, chunkIntervalMs: 5 };
/** Issue 18's targets: the added latency with durable bookings on PostgreSQL, and PGlite's throughput (npm start's default). */
const targets = { addedP50Ms: 1, addedP99Ms: 5, ttfbAddedP50Ms: 1, meteredPerSecond: 3_000, pgliteMeteredPerSecond: 2_000, chunkAddedMs: 1 };
const token = 'bench-gateway-token';
const messages = [{ role: 'user', content: 'Say hello in five words.' }];
const body = JSON.stringify({ model: defaultModelIds.M1, messages, max_tokens: 16 });
const streamBody = JSON.stringify({ model: defaultModelIds.M1, messages, max_tokens: 16, stream: true });

const cpus = os.cpus();
const machine = await benchPreamble('gateway');
const postgresDescription = await describePostgres(adminUrl);
console.log(`postgres: ${postgresDescription}`);

let upstream: UpstreamProcess | undefined;
let load: LoadProcess | undefined;
let gateway: GatewayProcess | undefined;
let db: TempDatabase | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
const results: EngineResult[] = [];
let portkey: PeerPhases | undefined;

try {
  upstream = await startUpstreamProcess(upstreamSettings);
  load = await startLoadProcess();
  db = await createTempDatabase(adminUrl);
  if (mainRun) results.push(await runEngine('PostgreSQL', { DATABASE_URL: db.url }, { database: { url: db.url, schema: 'gateway' }, full: true }));
  if (peers.includes('portkey')) portkey = await benchPortkey(load, peerSettings());
  if (variants.includes('async')) {
    const syncDb = await createTempDatabase(adminUrl);
    try {
      const label = 'PostgreSQL, GATEWAY_ASYNC_COMMIT=true';
      results.push(
        await runEngine(label, { DATABASE_URL: syncDb.url, GATEWAY_ASYNC_COMMIT: 'true' }, { database: { url: syncDb.url, schema: 'gateway' }, full: false }),
      );
    } finally {
      await sleep(100);
      await syncDb.drop();
    }
  }
  if (variants.includes('pglite')) {
    const pgliteDir = path.join(dataDir, 'pglite');
    results.push(await runEngine('PGlite', { DATA_DIR: pgliteDir }, { database: { dataDir: pgliteDir }, full: false }));
  }
  if (variants.includes('observe'))
    await benchObservability(load, {
      adminUrl,
      gatewayEnv: gatewayEnv((upstream as UpstreamProcess).info.url),
      actors: actorHeaders(),
      body,
      concurrency: 128,
      turnSeconds: Math.max(3, Math.round(seconds / 2)),
      warmUpSeconds: 10,
      rounds: observabilityRounds,
      execArgv: profileArgs(),
    });
  if (results.length > 0)
    printReport(results, {
      machine,
      postgres: postgresDescription,
      cores: cpus.length,
      fixedRate,
      streams: { count: streamCount, concurrency: streamConcurrency, ...upstreamSettings },
      targets,
    });
  if (portkey) printPortkeyComparison(results, portkey, machine);
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
  /** Where the gateway keeps its data: the ledger is counted there once it has stopped. */
  options: { database: { url?: string; schema?: string; dataDir?: string }; full: boolean },
): Promise<EngineResult> {
  const { full } = options;
  const up = upstream as UpstreamProcess;
  const gen = load as LoadProcess;
  gateway = await startGatewayProcess({ ...databaseEnv, ...gatewayEnv(up.info.url) }, profileArgs());
  const actors = actorHeaders();
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
  // One unmeasured second at the fixed rate right before each measured run (fixed-rate or streams): the gateway sat idle
  // through the direct run, long enough for its PostgreSQL pool to close its idle connections (10 s), and the rows
  // report the steady state.
  const warmUp = (target: Target) => gen.ask('openLoop', { target, body, rate: fixedRate, durationMs: 1_000 });
  const fixedRun = async (target: Target) => {
    await warmUp(target);
    return gen.ask('openLoop', { target, body, rate: fixedRate, durationMs: runSeconds * 1000 });
  };
  const fixed = { direct: await fixedRun('direct'), gateway: await fixedRun('gateway') };
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
    const streamRun = async (target: Target, startEveryMs?: number) => {
      await warmUp(target);
      return gen.ask('streams', { target, body: streamBody, count: streamCount, concurrency: streamConcurrency, ...(startEveryMs ? { startEveryMs } : {}) });
    };
    // Paced: one start per (stream length / concurrency), so about `streamConcurrency` are open at any time.
    const every = (upstreamSettings.chunks * upstreamSettings.chunkIntervalMs) / streamConcurrency;
    streams = {
      direct: await streamRun('direct'),
      gateway: await streamRun('gateway'),
      paced: { direct: await streamRun('direct', every), gateway: await streamRun('gateway', every) },
    };
  }
  await gateway.ask('stop');
  await gateway.exited;
  const served = fixed.gateway.ok + max.reduce((sum, m) => sum + m.run.ok, 0) + (streams?.gateway.streams ?? 0);
  const rows = await ledgerRows(options.database);
  // Warm-up calls and answers that landed after a run's window are debited too, so the ledger holds at least as many.
  console.log(`  metering check: ${rows} ledger rows for at least ${served} counted gateway answers${rows >= served ? '' : ' (FEWER ROWS THAN ANSWERS!)'}`);
  return { engine, fixed, serial, max, directMax, ...(streams ? { streams } : {}) };
}

/** Node's flags for BENCH_PROFILE: each gateway writes its .cpuprofile there on stop. */
function profileArgs(): string[] {
  return profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
}

/** Every gateway's settings but its database. */
function gatewayEnv(upstreamUrl: string) {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    PLATFORM_GATEWAY_TOKEN: token,
    GATEWAY_UPSTREAM_URL: upstreamUrl,
    GATEWAY_UPSTREAM_API_KEY: 'sk-bench-upstream',
    GATEWAY_DAILY_CAP_CREDIT: '1000000',
  };
}

/** The callers' headers: each call is another of `actorCount` actors. */
function actorHeaders() {
  return Array.from({ length: actorCount }, (_, i) => ({
    'content-type': 'application/json',
    authorization: `Bearer ${token}`,
    'x-platform-actor-did': `did:platform:bench-${i}:${i.toString(16).padStart(16, '0')}`,
    'x-platform-slot': 'compiler',
  }));
}

/** The phases of the PostgreSQL run, for a peer gateway in front of the same upstream. */
function peerSettings() {
  const every = (upstreamSettings.chunks * upstreamSettings.chunkIntervalMs) / streamConcurrency;
  const streams = { count: streamCount, concurrency: streamConcurrency, startEveryMs: every };
  const upstreamUrl = (upstream as UpstreamProcess).info.url;
  return { upstreamUrl, upstreamApiKey: 'sk-bench-upstream', body, streamBody, fixedRate, concurrencies, runSeconds: seconds, streams };
}

async function measure(work: () => Promise<CallRun>): Promise<{ run: CallRun; usage: Usage }> {
  const gw = gateway as GatewayProcess;
  const before = await gw.ask('cpu');
  const from = cpuSnapshot();
  const run = await work();
  const to = cpuSnapshot();
  const after = await gw.ask('cpu');
  const wallMs = (to?.at ?? 0) - (from?.at ?? 0);
  const { machine, postgres } = cpuBetween(from, to);
  const gatewayMs = (after.user + after.system - before.user - before.system) / 1000;
  const calls = run.ok + errorCount(run);
  const gatewayCores = wallMs > 0 ? gatewayMs / wallMs : Number.NaN;
  return { run, usage: { gateway: gatewayCores, postgres, machine, gatewayMicrosPerCall: calls > 0 ? (gatewayMs * 1000) / calls : Number.NaN } };
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

/** The gateway's ledger rows, read as the gateway reads its database (PostgreSQL schema, or the PGlite folder). */
async function ledgerRows(where: { url?: string; schema?: string; dataDir?: string }): Promise<number> {
  const database = await openDatabase<GatewaySchema>({ ...where, logger: silentLogger });
  try {
    const row = await database.db
      .selectFrom('ledger')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  } finally {
    await database.close();
  }
}
