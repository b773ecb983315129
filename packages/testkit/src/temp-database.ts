import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export interface TempDatabase {
  /** Connection string for the fresh database. */
  url: string;
  /** Its name (`bench_<hex>`), e.g. to count its backends' CPU (cpu.ts `postgresOf`). */
  name: string;
  /** Drops the database, terminating any sessions a peer left behind. */
  drop(): Promise<void>;
  /**
   * `vacuum analyze`: statistics for tables that were empty when the service planned its statements, so a bench
   * measures the plans PostgreSQL keeps rather than the ones it makes before autovacuum first looks (a minute in).
   */
  analyze(): Promise<void>;
}

async function admin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * pg's pool.end() resolves once each client has *sent* Terminate, so backends can linger a few ms.
 * FORCE-killing them then surfaces as a 57P01 'error' on a client that is already closing, so wait
 * (bounded) for them to leave first; FORCE still clears anything a crashed peer left behind.
 */
async function dropWhenIdle(client: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    if (rows[0]?.n === 0) break;
    await sleep(25);
  }
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * Creates `bench_<random>` (or `<prefix>_<random>`) next to the database `adminUrl` points at, so every benchmark run (and every peer)
 * starts from empty tables and indexes instead of whatever bloat a previous run left. Drop it when done.
 *
 * @example const db = await createTempDatabase('postgres://postgres@127.0.0.1:5432/postgres'); try { ... } finally { await db.drop(); }
 */
export async function createTempDatabase(adminUrl: string, prefix: 'bench' | 'platform' = 'bench'): Promise<TempDatabase> {
  // Hex only: the name is spliced into DDL, which cannot take bind parameters.
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin(adminUrl, (c) => dropWhenIdle(c, name)),
    analyze: () => admin(url.toString(), (c) => c.query('vacuum analyze').then(() => undefined)),
  };
}
