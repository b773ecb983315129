import { randomBytes } from 'node:crypto';
import type { OpenDatabaseOptions } from '@platform/kit/db/open-database';
import pg from 'pg';
import pino from 'pino';
import { createTempDatabase } from './temp-database.ts';

export const silentLogger = pino({ level: 'silent' });

/** One database engine a test runs against. */
export interface TestEngine {
  name: 'pglite' | 'postgres';
  /** Options for `openDatabase` pointing at a fresh, empty database; `dispose` removes it. */
  fresh(): Promise<{ options: OpenDatabaseOptions; dispose: () => Promise<void> }>;
}

const pglite: TestEngine = {
  name: 'pglite',
  fresh: async () => ({ options: { logger: silentLogger }, dispose: async () => {} }),
};

/**
 * PostgreSQL at `url`, a fresh schema per `fresh()` (dropped by its `dispose`); services connect through `connectUrl`
 * (a relay, `database-outage.ts`) when given, and `made` hears each schema's name.
 */
export function postgresAt(url: string, options: { connectUrl?: string; made?: (schema: string) => void } = {}): TestEngine {
  return {
    name: 'postgres',
    async fresh() {
      const schema = `t_${randomBytes(6).toString('hex')}`;
      options.made?.(schema);
      return {
        options: { url: options.connectUrl ?? url, schema, logger: silentLogger },
        async dispose() {
          const client = new pg.Client({ connectionString: url });
          await client.connect();
          try {
            await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          } finally {
            await client.end();
          }
        },
      };
    },
  };
}

/**
 * The engines every database test runs on: embedded PGlite always, and real PostgreSQL (a fresh
 * schema per use) when TEST_DATABASE_URL is set, as it is in CI.
 *
 * @example for (const engine of testEngines()) describe(`alarms on ${engine.name}`, () => { ... })
 */
export function testEngines(): TestEngine[] {
  const url = process.env.TEST_DATABASE_URL;
  return url ? [pglite, postgresAt(url)] : [pglite];
}

/** Real PostgreSQL only (multi-instance tests); undefined when TEST_DATABASE_URL is unset. */
export function postgresEngine(): TestEngine | undefined {
  const url = process.env.TEST_DATABASE_URL;
  return url ? postgresAt(url) : undefined;
}

/** A database for a service started as a process: the settings that point it there, and how to remove it. */
export interface ProcessDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * The engines a test runs a service process on: embedded PGlite (in the process's own data folder), and a fresh
 * PostgreSQL database when TEST_DATABASE_URL is set (the service makes its own schema there, as in production).
 *
 * @example for (const engine of processEngines()) test(`on ${engine.name}`, async () => { const db = await engine.database(); ... })
 */
export function processEngines(): Array<{ name: TestEngine['name']; database(): Promise<ProcessDatabase> }> {
  const url = process.env.TEST_DATABASE_URL;
  const embedded = { name: 'pglite' as const, database: async () => ({ env: {}, drop: async () => {} }) };
  if (!url) return [embedded];
  const postgres = {
    name: 'postgres' as const,
    async database() {
      const created = await createTempDatabase(url, 'platform');
      return { env: { DATABASE_URL: created.url }, drop: created.drop };
    },
  };
  return [embedded, postgres];
}
