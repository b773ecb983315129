import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { openDatabase } from '@platform/kit/db/open-database';
import { sql } from 'kysely';
import { terminateBackends } from './database-outage.ts';
import { postgresEngine } from './databases.ts';
import { eventually } from './eventually.ts';

const engine = postgresEngine();

describe('terminateBackends', { skip: engine ? false : 'needs TEST_DATABASE_URL' }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test("ends every session of one service's schema and none of another's on the same database", async () => {
    const open = async () => {
      const fresh = await (engine as NonNullable<typeof engine>).fresh();
      const database = await openDatabase<unknown>(fresh.options);
      cleanups.push(fresh.dispose, () => database.close());
      // Two sessions each: one a transaction holds, one the statement beside it runs on.
      await database.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await sql`select 1`.execute(database.db);
      });
      return { database, schema: fresh.options.schema as string };
    };
    const [target, bystander] = [await open(), await open()];
    const adminUrl = process.env.TEST_DATABASE_URL as string;
    assert.equal(await terminateBackends(adminUrl, { schema: target.schema }), 2);
    // The target's pool opens a new connection once it has seen its old ones go.
    await eventually(
      () =>
        sql`select 1`.execute(target.database.db).then(
          () => true,
          () => false,
        ),
      'the target answers again',
    );
    // The bystander still had both of its sessions to lose.
    assert.equal(await terminateBackends(adminUrl, { schema: bystander.schema }), 2);
  });
});
