import { randomBytes } from 'node:crypto';
import type { OpenDatabaseOptions } from '@platform/kit/db/open-database';
import pg from 'pg';
import pino from 'pino';

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
