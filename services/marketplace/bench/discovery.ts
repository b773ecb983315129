/*
 * Discovery at catalogue scale: the deterministic corpus (bench/discovery-corpus.ts) seeded into a fresh
 * database, then each route timed one call in flight over real HTTP (p50/p99), beside peers that skip our work:
 * a bare `ts_rank` query (websearch_to_tsquery, no filters, no blending, no stats join) and a plain ILIKE scan,
 * run straight through Kysely with the same probes. Our in-process `discoverPage` (no HTTP) is timed too, so the
 * HTTP share is visible. The target (issue 14): discovery p99 under 20 ms over 10,000 listings.
 *
 *   import { benchDiscovery } from './discovery.ts';
 *   const rows = await benchDiscovery({ engine: 'postgres', adminUrl: 'postgres://postgres@127.0.0.1:5432/postgres' });
 */
import { performance } from 'node:perf_hooks';
import { silentLogger, type TestEngine } from '@platform/testkit/databases';
import { p50, p99 } from '@platform/testkit/stats';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import { sql } from 'kysely';
import { serviceName } from '../src/app.ts';
import { discoverPage } from '../src/discovery/discover.ts';
import { filtersInput } from '../src/discovery/inputs.ts';
import { headerDeveloperAuth, insertListings } from '../test/discovery-fixtures.ts';
import { type Marketplace, startMarketplace } from '../test/harness.ts';
import { type DiscoveryProbe, discoveryCorpus, discoveryProbes } from './discovery-corpus.ts';

export interface DiscoveryBenchOptions {
  engine: 'postgres' | 'pglite';
  /** PostgreSQL admin URL; a temporary database is created beside it and dropped after (default: local postgres). */
  adminUrl?: string;
  /** Active listings (default 10,000) and listings in draft/paused/delisted that queries must step over (default 1,000). */
  listings?: number;
  inactive?: number;
  /** Timed calls per row (default 1,000) after `warmup` untimed ones (default 100). */
  calls?: number;
  warmup?: number;
  seed?: number;
  /** Progress lines (seeding, each row); silent by default. */
  log?: (line: string) => void;
}

export interface DiscoveryBenchRow {
  engine: 'postgres' | 'pglite';
  /** What was timed, e.g. `GET /v1/discover (HTTP)` or `peer: bare ts_rank (SQL)`. */
  case: string;
  kind: 'ours' | 'peer';
  listings: number;
  calls: number;
  p50Ms: number;
  p99Ms: number;
  /** Ours over HTTP: p99 under `targetP99Ms`. */
  meetsTarget: boolean | null;
  /** Ours: this row's p50 over the bare ts_rank peer's p50 (the price of filters, blending and stats). */
  p50VsBareRank: number | null;
}

export const targetP99Ms = 20;

const probeQuery = (probe: DiscoveryProbe): string => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(probe)) if (value !== undefined) params.set(key, String(value));
  return params.toString();
};
const probeBody = (probe: DiscoveryProbe) => {
  const { q, min_uptime_bps, confidential, ...rest } = probe;
  const filters = { ...rest, ...(min_uptime_bps === undefined ? {} : { min_uptime_bps }), ...(confidential === undefined ? {} : { confidential }) };
  return { ...(q === undefined ? {} : { query: q }), filters, limit: 20 };
};

async function timed(count: number, warmup: number, run: (index: number) => Promise<void>): Promise<number[]> {
  for (let index = 0; index < warmup; index++) await run(index);
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await run(warmup + index);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

async function expectOk(response: Response): Promise<void> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`discovery bench: ${response.status} ${text.slice(0, 300)}`);
}

/** Seeds, serves and times; the rows are in the order ours (HTTP), ours (in-process), peers. */
export async function benchDiscovery(options: DiscoveryBenchOptions): Promise<DiscoveryBenchRow[]> {
  const active = options.listings ?? 10_000;
  const calls = options.calls ?? 1_000;
  const warmup = options.warmup ?? 100;
  const seed = options.seed ?? 14;
  const log = options.log ?? (() => {});
  let temp: TempDatabase | undefined;
  if (options.engine === 'postgres') temp = await createTempDatabase(options.adminUrl ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  // The test harness builds the whole service (whatever deps the app needs), here on the temporary database.
  const engine: TestEngine = {
    name: options.engine,
    fresh: async () => ({ options: { url: temp?.url, schema: serviceName, logger: silentLogger }, dispose: async () => {} }),
  };
  const m = await startMarketplace(engine, { developers: headerDeveloperAuth });
  try {
    const started = performance.now();
    await insertListings(m.database.db, discoveryCorpus({ active, inactive: options.inactive ?? 1_000, seed }));
    // The steady state of a live catalogue: statistics gathered and the visibility map set.
    await sql`vacuum analyze`.execute(m.database.db);
    log(`discovery bench (${options.engine}): seeded ${active} active listings in ${Math.round(performance.now() - started)} ms`);
    return await measure(m, { ...options, active, calls, warmup, seed, log });
  } finally {
    await m.close();
    await temp?.drop();
  }
}

async function measure(
  m: Marketplace,
  options: DiscoveryBenchOptions & { active: number; calls: number; warmup: number; seed: number; log: (line: string) => void },
): Promise<DiscoveryBenchRow[]> {
  const { engine, active, calls, warmup, log } = options;
  const db = m.database.db;
  const base = await m.app.listen({ host: '127.0.0.1', port: 0 });
  const rows: DiscoveryBenchRow[] = [];
  const record = (name: string, kind: 'ours' | 'peer', latencies: number[]) => {
    const row: DiscoveryBenchRow = {
      engine,
      case: name,
      kind,
      listings: active,
      calls: latencies.length,
      p50Ms: p50(latencies),
      p99Ms: p99(latencies),
      meetsTarget: kind === 'ours' && name.endsWith('(HTTP)') ? p99(latencies) < targetP99Ms : null,
      p50VsBareRank: null,
    };
    rows.push(row);
    log(`  ${name}: p50 ${row.p50Ms.toFixed(2)} ms, p99 ${row.p99Ms.toFixed(2)} ms`);
  };
  try {
    const probes = discoveryProbes(calls + warmup, options.seed + 1);
    const filtered = discoveryProbes(6 * (calls + warmup), options.seed + 2).filter((probe) => probe.max_price_wei !== undefined);
    const worded = probes.filter((probe) => probe.q !== undefined);

    // The catalog: pages at spread offsets (cursors collected by walking it once).
    const cursors: Array<string | undefined> = [undefined];
    for (let cursor: string | null = null; cursors.length < 50; ) {
      const page = (await (await fetch(`${base}/v1/catalog?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json()) as { data: { next_cursor: string | null } };
      cursor = page.data.next_cursor;
      if (cursor === null) break;
      cursors.push(cursor);
    }
    const at = <T>(values: readonly T[], index: number) => values[index % values.length] as T;
    record(
      'GET /v1/catalog (HTTP)',
      'ours',
      await timed(calls, warmup, async (index) => {
        const cursor = at(cursors, index);
        await expectOk(await fetch(`${base}/v1/catalog?limit=20${cursor ? `&cursor=${cursor}` : ''}`));
      }),
    );
    record(
      'GET /v1/discover, query mix (HTTP)',
      'ours',
      await timed(calls, warmup, async (index) => expectOk(await fetch(`${base}/v1/discover?${probeQuery(at(probes, index))}`))),
    );
    record(
      'POST /v1/discover, every filter (HTTP)',
      'ours',
      await timed(calls, warmup, async (index) =>
        expectOk(
          await fetch(`${base}/v1/discover`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(probeBody(at(filtered, index))),
          }),
        ),
      ),
    );
    record(
      'discoverPage, query mix (in-process)',
      'ours',
      await timed(calls, warmup, async (index) => {
        const { q, ...filters } = at(probes, index);
        await discoverPage(db, { query: q ?? '', filters: filtersInput(filters), limit: 20, cursor: undefined });
      }),
    );
    record(
      'peer: bare ts_rank, worded probes (SQL)',
      'peer',
      await timed(calls, warmup, async (index) => {
        await sql`select id, slug, display_name, summary, kind, manifest from listings
          where status = 'active' and search @@ websearch_to_tsquery('english', ${at(worded, index).q})
          order by ts_rank(search, websearch_to_tsquery('english', ${at(worded, index).q})) desc, id limit 20`.execute(db);
      }),
    );
    record(
      'peer: ILIKE scan, first word (SQL)',
      'peer',
      await timed(calls, warmup, async (index) => {
        const word = (at(worded, index).q ?? '').split(' ').find((part) => part.length > 3) ?? 'api';
        await sql`select id, slug, display_name, summary, kind, manifest from listings
          where status = 'active' and search_document ilike ${`%${word}%`} order by id limit 20`.execute(db);
      }),
    );
    const bare = rows.find((row) => row.case.startsWith('peer: bare ts_rank'));
    for (const row of rows) if (row.kind === 'ours' && bare) row.p50VsBareRank = row.p50Ms / bare.p50Ms;
    return rows;
  } finally {
    await m.app.close();
  }
}

/** `node bench/discovery.ts [postgres|pglite]`: one engine's rows as a table (the service's bench main prints its own). */
if (import.meta.main) {
  const engine = (process.argv[2] ?? 'postgres') as 'postgres' | 'pglite';
  const rows = await benchDiscovery({
    engine,
    adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    calls: Number(process.env.BENCH_CALLS ?? 1000),
    log: console.log,
  });
  console.log('| engine | case | listings | calls | p50 ms | p99 ms | p99 < 20 ms | p50 vs bare ts_rank |');
  console.log('|---|---|---:|---:|---:|---:|---|---:|');
  for (const row of rows)
    console.log(
      `| ${row.engine} | ${row.case} | ${row.listings} | ${row.calls} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.meetsTarget === null ? '–' : row.meetsTarget ? 'yes' : 'no'} | ${row.p50VsBareRank === null ? '–' : `${row.p50VsBareRank.toFixed(2)}x`} |`,
    );
}
