import { type Migration, Migrator } from 'kysely/migration';
import type { Database } from './open-database.ts';

/**
 * Applies a service's numbered, forward-only migrations at start. Each service keeps its own
 * bookkeeping tables so services can share one database.
 *
 * @example await migrate(database, 'scheduler', { '0001_alarms': { up: async (db) => { ... } } })
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any service's schema.
export async function migrate(database: Database<any>, service: string, migrations: Record<string, Migration>): Promise<void> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `${service}_migrations`,
    migrationLockTableName: `${service}_migrations_lock`,
    // Named explicitly: Kysely otherwise looks for its tables in every schema and can find another test's.
    migrationTableSchema: database.schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} of ${service} failed`, { cause: error });
  }
}
