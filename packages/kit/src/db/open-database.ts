import { mkdirSync } from 'node:fs';
import type { Extensions } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { ServiceMetrics } from '../observability/metrics.ts';
import { scopedChannel } from './channels.ts';
import { databaseMetrics } from './database-metrics.ts';
import { createPGlite } from './pglite-boot.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { PostgresListener } from './postgres-listener.ts';
import { kyselyPool } from './postgres-pool.ts';
import { SessionSchemaIntrospector } from './schema-introspector.ts';

export interface Database<Schema> {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Kysely<Schema>;
  /** The schema holding the service's tables. */
  readonly schema: string;
  /** Where the data lives, safe to print (no password). */
  readonly location: string;
  /**
   * Subscribes to NOTIFY on this schema's `channel` (see `scopedChannel`): writers reach it with `notify(channel, …)`
   * on both engines; a writer in another schema of the same database never does.
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** True when a trivial query answers within the timeout. */
  ping(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; when absent, embedded PGlite is used. */
  url?: string | undefined;
  /** PGlite data folder; undefined keeps PGlite in memory (tests). */
  dataDir?: string | undefined;
  /** PostgreSQL schema for this service's tables, created when missing (lets services share one database). */
  schema?: string | undefined;
  poolSize?: number;
  /** PGlite extensions to load (e.g. pgvector); a service still runs `CREATE EXTENSION` in its migrations. */
  pgliteExtensions?: Extensions;
  logger: Logger;
  /** The service's metrics: query latency and the pool's use are counted there (`database-metrics.ts`). */
  metrics?: ServiceMetrics;
}

const schemaName = /^[a-z_][a-z0-9_]{0,62}$/;
// int8 columns (money, counters) come back as bigint on both engines, never as a lossy number.
const int8 = 20;

/**
 * Opens the service's database: PostgreSQL when a URL is given, else embedded PGlite.
 *
 * @example const database = await openDatabase<Schema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: 'scheduler', logger })
 */
export async function openDatabase<Schema>(options: OpenDatabaseOptions): Promise<Database<Schema>> {
  return options.url ? openPostgres<Schema>(options.url, options) : openPGlite<Schema>(options);
}

async function openPGlite<Schema>(options: OpenDatabaseOptions): Promise<Database<Schema>> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const pglite = await createPGlite(options.dataDir || undefined, {
    parsers: { [int8]: (value: string) => BigInt(value) },
    ...(options.pgliteExtensions ? { extensions: options.pgliteExtensions } : {}),
  });
  const dialect = new PGliteDialect(pglite);
  const pool = { total: () => 1, idle: () => (dialect.use.lent ? 0 : 1), waiting: () => dialect.use.waiting };
  const db = new Kysely<Schema>({ dialect, ...databaseMetrics(options.metrics, pool) });
  const schema = await sessionSchema(db);
  return {
    kind: 'pglite',
    db,
    schema,
    location: options.dataDir ? `PGlite in ${options.dataDir}` : 'PGlite in memory',
    listen: async (channel, onPayload) => {
      // PGlite puts the name into LISTEN and UNLISTEN as given: quoted, the dot is part of the name, as `pg_notify`
      // spells it. Its own unlisten handle would pass the unquoted name, so the same quoted one is passed here.
      const name = pg.escapeIdentifier(scopedChannel(schema, channel));
      await pglite.listen(name, onPayload);
      return () => pglite.unlisten(name, onPayload);
    },
    ping: (timeoutMs) => pingWith(db, timeoutMs),
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

async function openPostgres<Schema>(url: string, options: OpenDatabaseOptions): Promise<Database<Schema>> {
  const schema = options.schema;
  if (schema !== undefined && !schemaName.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const clientConfig: pg.ClientConfig = {
    connectionString: url,
    connectionTimeoutMillis: 5000,
    // `public` after the service's schema: extensions (pgvector) are installed there once per database, shared by
    // every service schema, and must stay visible from each. Sessions are named after the schema, so pg_stat_activity
    // tells the services sharing a database apart (an application_name in the URL wins).
    ...(schema ? { options: `-c search_path=${schema},public`, application_name: schema } : {}),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === int8 ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
    },
  };
  if (schema) {
    const setup = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    await setup.connect();
    try {
      await setup.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    } finally {
      await setup.end();
    }
  }
  const pool = new pg.Pool({ ...clientConfig, max: options.poolSize ?? 10 });
  // An idle client can fail (server restart); without a listener that would crash the process. Logged by code and
  // message only: node-postgres's pool hangs the whole client (its connection settings) on the error.
  const lost = (error: Error) => ({ code: (error as { code?: unknown }).code, reason: error.message });
  pool.on('error', (error) => options.logger.warn(lost(error), 'idle database connection failed'));
  const onLostWhileLent = (error: Error) => options.logger.warn(lost(error), 'database connection lost while in use; the pool opens another');
  const use = { total: () => pool.totalCount, idle: () => pool.idleCount, waiting: () => pool.waitingCount };
  const db = new Kysely<Schema>({
    dialect: new SessionSchemaPostgresDialect({ pool: kyselyPool(pool, onLostWhileLent) }),
    ...databaseMetrics(options.metrics, use),
  });
  const listener = new PostgresListener(clientConfig, options.logger);
  // A database that cannot answer fails the start here, with its pool closed rather than left holding the process.
  const sessionsSchema = await sessionSchema(db).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const parsed = new URL(url);
  return {
    kind: 'postgres',
    db,
    schema: sessionsSchema,
    location: `PostgreSQL ${parsed.host}${parsed.pathname}${schema ? ` (schema ${schema})` : ''}`,
    listen: (channel, onPayload) => listener.listen(scopedChannel(sessionsSchema, channel), onPayload),
    ping: (timeoutMs) => pingWith(db, timeoutMs),
    close: async () => {
      await listener.close();
      await db.destroy();
    },
  };
}

/**
 * The schema the service's sessions write to: `current_schema()`, the first one on their search_path that exists.
 * Channels are scoped by it, since it is what writers' `notify` reads in their own sessions.
 */
// biome-ignore lint/suspicious/noExplicitAny: asked of any schema.
async function sessionSchema(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('no schema on the search_path exists: the service has nowhere to keep its tables');
  return schema;
}

// biome-ignore lint/suspicious/noExplicitAny: a ping works on any schema.
async function pingWith(db: Kysely<any>, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const query = sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Kysely's PostgreSQL dialect, its introspection kept to the session's schema (see SessionSchemaIntrospector). */
class SessionSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>) {
    return new SessionSchemaIntrospector(db);
  }
}
