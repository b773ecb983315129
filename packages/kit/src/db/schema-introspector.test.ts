import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postgresEngine, silentLogger, testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import { migrate } from './migrate.ts';
import { openDatabase } from './open-database.ts';

for (const engine of testEngines()) {
  test(`on ${engine.name}, introspection lists the session schema's tables and columns, never another schema's`, async () => {
    const fresh = await engine.fresh();
    const database = await openDatabase<unknown>({ ...fresh.options, logger: silentLogger });
    try {
      await sql`create schema if not exists elsewhere_${sql.raw(String(process.pid))}`.execute(database.db);
      await sql`create table if not exists elsewhere_${sql.raw(String(process.pid))}.theirs (id int)`.execute(database.db);
      await sql`create table mine (id bigserial primary key, name text not null, note text default 'none', at timestamptz)`.execute(database.db);
      await sql`comment on column mine.name is 'who'`.execute(database.db);
      await sql`create view mine_names as select name from mine`.execute(database.db);
      await migrate(database, 'probe', { '0001_nothing': { up: async () => {} } });

      const tables = await database.db.introspection.getTables();
      assert.deepEqual(
        tables.map((table) => [table.schema, table.name, table.isView]),
        [
          [database.schema, 'mine', false],
          [database.schema, 'mine_names', true],
        ],
        'neither the other schema’s table nor the migrator’s own',
      );
      assert.deepEqual(
        tables[0]?.columns.map((column) => [
          column.name,
          column.dataType,
          column.isNullable,
          column.hasDefaultValue,
          column.isAutoIncrementing,
          column.comment,
        ]),
        [
          ['id', 'int8', false, true, true, undefined],
          ['name', 'text', false, false, false, 'who'],
          ['note', 'text', true, true, false, undefined],
          ['at', 'timestamptz', true, false, false, undefined],
        ],
      );
      const withInternal = await database.db.introspection.getTables({ withInternalKyselyTables: true });
      assert.deepEqual(
        withInternal.map((table) => table.name),
        ['mine', 'mine_names', 'probe_migrations', 'probe_migrations_lock'],
      );
    } finally {
      await sql`drop schema if exists elsewhere_${sql.raw(String(process.pid))} cascade`.execute(database.db);
      await database.close();
      await fresh.dispose();
    }
  });
}

test('a service migrates while other schemas of its database are being dropped', { skip: postgresEngine() ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const engine = postgresEngine();
  if (!engine) return;
  // Kysely's own introspector read every schema by name and failed when one went away under it.
  const churn = await Promise.all(Array.from({ length: 24 }, () => engine.fresh()));
  const opened = await Promise.all(churn.map((fresh) => openDatabase<unknown>({ ...fresh.options, logger: silentLogger })));
  for (const other of opened)
    for (const name of ['a', 'b', 'c', 'd']) await sql`create table ${sql.id(name)} (id serial, x text, y text, z text)`.execute(other.db);
  const fresh = await engine.fresh();
  const database = await openDatabase<unknown>({ ...fresh.options, logger: silentLogger });
  try {
    let dropped = false;
    const dropping = (async () => {
      for (const other of churn) await other.dispose();
      dropped = true;
    })();
    for (let round = 0; !dropped || round < 5; round++) await migrate(database, `round${round}`, { '0001_nothing': { up: async () => {} } });
    await dropping;
  } finally {
    await Promise.all(opened.map((other) => other.close()));
    await database.close();
    await fresh.dispose();
  }
});
