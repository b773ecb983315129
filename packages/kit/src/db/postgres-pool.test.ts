import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import { type Database, openDatabase } from './open-database.ts';

const postgres = testEngines().find((engine) => engine.name === 'postgres');

describe('the PostgreSQL pool as Kysely uses it', { skip: postgres === undefined ? 'no PostgreSQL for this run' : false }, () => {
  let database: Database<unknown>;
  let dispose: () => Promise<void>;
  before(async () => {
    const fresh = await (postgres as NonNullable<typeof postgres>).fresh();
    dispose = fresh.dispose;
    database = await openDatabase<unknown>({ ...fresh.options, logger: silentLogger });
    await sql`create table pool_probe (n int primary key)`.execute(database.db);
  });
  after(async () => {
    await database.close();
    await dispose();
  });

  test("runs a transaction's statements on one connection, and a failed one leaves nothing", async () => {
    const pids = await database.db.transaction().execute(async (trx) => {
      const pid = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]?.pid;
      return [await pid(), await pid()];
    });
    assert.equal(pids[0], pids[1]);
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await sql`insert into pool_probe (n) values (1)`.execute(trx);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    const { rows } = await sql<{ n: number }>`select n from pool_probe`.execute(database.db);
    assert.deepEqual(rows, []);
  });

  test("rejects a refused statement with PostgreSQL's error and code, and gives its connection back", async () => {
    // More failures than the pool has connections: each must be released, or the last ones would wait forever.
    for (let attempt = 0; attempt < 25; attempt++)
      await assert.rejects(sql`select 1 / ${0}::int as never`.execute(database.db), (error: Error & { code?: string }) => {
        assert.equal(error.code, '22012');
        assert.match(error.message, /division by zero/);
        return true;
      });
    const { rows } = await sql<{ answer: number }>`select ${41}::int + 1 as answer`.execute(database.db);
    assert.deepEqual(rows, [{ answer: 42 }]);
  });

  test('returns rows with the kit’s types (int8 as bigint) and the command’s affected count', async () => {
    const inserted = await sql`insert into pool_probe (n) values (7), (8)`.execute(database.db);
    assert.equal(inserted.numAffectedRows, 2n);
    const { rows } = await sql<{ big: bigint }>`select ${'9007199254740993'}::int8 as big`.execute(database.db);
    assert.deepEqual(rows, [{ big: 9007199254740993n }]);
  });
});
