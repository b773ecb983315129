import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import { type Database, openDatabase } from './open-database.ts';
import { prepared, preparedName } from './prepared-statements.ts';

for (const engine of testEngines()) {
  describe(`marked statements on ${engine.name}`, () => {
    let database: Database<unknown>;
    let dispose: () => Promise<void>;
    before(async () => {
      const fresh = await engine.fresh();
      dispose = fresh.dispose;
      database = await openDatabase<unknown>({ ...fresh.options, logger: silentLogger });
    });
    after(async () => {
      await database.close();
      await dispose();
    });

    test('answer as the same statement unmarked, for every parameter value, on one connection and the next', async () => {
      const statement = (n: number) => prepared(sql<{ doubled: number }>`select (${n}::int * 2) as doubled`);
      const answers = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(async (n) => (await statement(n).execute(database.db)).rows[0]?.doubled));
      assert.deepEqual(answers, [2, 4, 6, 8, 10, 12, 14, 16]);
    });

    if (engine.name === 'postgres')
      test('are parsed once per connection: the server keeps them prepared under a name derived from the text', async () => {
        await database.db.connection().execute(async (connection) => {
          const text = prepared(sql`select ${'a'}::text as letter`);
          for (let run = 0; run < 3; run++) assert.equal((await text.execute(connection)).rows.length, 1);
          const held = async () =>
            (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(connection)).rows;
          const compiled = text.compile(connection).sql;
          const mine = (await held()).filter((row) => row.statement === compiled);
          assert.deepEqual(
            mine.map((row) => row.name),
            [preparedName(compiled)],
          );
          // An unmarked statement stays unnamed.
          const before = (await held()).length;
          await sql`select ${'b'}::text as letter`.execute(connection);
          assert.equal((await held()).length, before);
        });
      });
  });
}
