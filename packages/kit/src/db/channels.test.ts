import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresEngine, silentLogger, type TestEngine, testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { sql } from 'kysely';
import { notify, scopedChannel } from './channels.ts';
import { openDatabase } from './open-database.ts';

/** A database on a fresh schema of `engine`, with what its listener on `channel` has heard. */
async function listening(engine: TestEngine, channel: string) {
  const fresh = await engine.fresh();
  const database = await openDatabase<unknown>({ ...fresh.options, logger: silentLogger });
  const heard: string[] = [];
  const unlisten = await database.listen(channel, (payload) => void heard.push(payload));
  const send = (payload: string) => sql`select ${notify(channel, payload)}`.execute(database.db);
  const close = async () => {
    await database.close();
    await fresh.dispose();
  };
  return { database, heard, send, unlisten, close };
}

for (const engine of testEngines()) {
  test(`on ${engine.name}, notify reaches a listener of the same channel in the same schema, until it unlistens`, async () => {
    const one = await listening(engine, 'probe');
    try {
      const control: string[] = [];
      await one.database.listen('probe', (payload) => void control.push(payload));
      await one.send('first');
      await one.send('second');
      await eventually(
        () => one.heard.length === 2,
        () => `two notifications, heard ${one.heard}`,
      );
      assert.deepEqual(one.heard, ['first', 'second']);
      await one.unlisten();
      await one.send('third');
      await eventually(
        () => control.length === 3,
        () => `the other listener hears the third, heard ${control}`,
      );
      assert.deepEqual(one.heard, ['first', 'second']);
    } finally {
      await one.close();
    }
  });
}

const postgres = postgresEngine();
describe('channels of two schemas in one PostgreSQL database', { skip: postgres ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let a: Awaited<ReturnType<typeof listening>>;
  let b: Awaited<ReturnType<typeof listening>>;
  before(async () => {
    a = await listening(postgres as NonNullable<typeof postgres>, 'probe');
    b = await listening(postgres as NonNullable<typeof postgres>, 'probe');
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  test('each schema hears only its own writers, though the channel has the same name', async () => {
    // Notifications reach every listening session in commit order: had B's listener heard a1 it would have heard
    // it before b1, and A's would have heard b1 before a2.
    await a.send('a1');
    await b.send('b1');
    await a.send('a2');
    await b.send('b2');
    await eventually(
      () => a.heard.length >= 2 && b.heard.length >= 2,
      () => `A heard ${a.heard}, B heard ${b.heard}`,
    );
    assert.deepEqual(a.heard, ['a1', 'a2']);
    assert.deepEqual(b.heard, ['b1', 'b2']);
  });

  test("the scope is the sessions' schema, and a name past PostgreSQL's 63 bytes is refused up front", () => {
    assert.match(a.database.schema, /^t_[0-9a-f]{12}$/);
    assert.equal(scopedChannel('s'.repeat(52), 'settlement'), `${'s'.repeat(52)}.settlement`);
    assert.throws(() => scopedChannel('s'.repeat(53), 'settlement'), /longer than 63 bytes/);
  });
});
