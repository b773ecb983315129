import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { silentLogger } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { sql } from 'kysely';
import pino from 'pino';
import { createServiceApp } from '../http/create-app.ts';
import { type Database, openDatabase } from './open-database.ts';
import { isDatabaseUnavailable, noteDatabaseFailure } from './unavailable.ts';

const behind = await postgresBehindLink();

test('only the driver’s connection failures count as the database being unavailable', () => {
  const noted = (error: object) => isDatabaseUnavailable(noteDatabaseFailure(error));
  for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300', '25006', 'ECONNREFUSED', 'ECONNRESET'])
    assert.equal(noted(Object.assign(new Error('x'), { code })), true, code);
  for (const message of [
    'Connection terminated unexpectedly',
    'Client has encountered a connection error and is not queryable',
    'timeout exceeded when trying to connect',
  ])
    assert.equal(noted(new Error(message)), true, message);
  assert.equal(noted(Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]), {})), true, 'an aggregate of refusals');
  for (const code of ['23505', '22012', '08P01', '40001', '42P01']) assert.equal(noted(Object.assign(new Error('x'), { code })), false, code);
  // The same refusal, from a call that is not the database's: not noted, so never taken for it.
  assert.equal(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })), false);
});

describe('a PostgreSQL database that goes away and comes back', { skip: behind ? false : 'needs TEST_DATABASE_URL' }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let database: Database<unknown>;
  let dispose: () => Promise<void>;
  const warnings: string[] = [];
  before(async () => {
    const fresh = await engine.fresh();
    dispose = fresh.dispose;
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
    database = await openDatabase<unknown>({ ...fresh.options, logger });
    await sql`create table probe (n int primary key)`.execute(database.db);
  });
  after(async () => {
    outage.end();
    await database.close();
    await dispose();
    await close();
  });

  test('a connection lost while lent out fails its statements, not the process, and the pool recovers', async () => {
    // Judged as soon as they settle, so no rejection waits unhandled.
    const sleeping = assert.rejects(sql`select pg_sleep(30)`.execute(database.db), (error) => isDatabaseUnavailable(error));
    // Lent between two statements of a transaction: node-postgres's pool listens only on idle clients.
    let inside!: () => void;
    const begun = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let resume!: () => void;
    const held = database.db.transaction().execute(async (trx) => {
      await sql`insert into probe (n) values (1)`.execute(trx);
      inside();
      await new Promise<void>((resolve) => {
        resume = resolve;
      });
      await sql`insert into probe (n) values (2)`.execute(trx);
    });
    const heldFailure = assert.rejects(held, (error) => isDatabaseUnavailable(error));
    await begun;
    await outage.begin();
    await sleeping;
    await eventually(() => warnings.includes('database connection lost while in use; the pool opens another'), 'the lent connection’s loss is logged');
    resume();
    await heldFailure;
    await assert.rejects(sql`select 1`.execute(database.db), (error) => isDatabaseUnavailable(error), 'no new connection while refused');
    outage.end();
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from probe`.execute(database.db);
    assert.deepEqual(rows, [{ n: 0 }], 'the transaction the loss cut short left nothing');
  });

  test('a route answers 503 unavailable, retryable, with Retry-After while the database is away, and 200 after', async () => {
    const app = createServiceApp({ logger: silentLogger, bodyLimit: 1024, api: undefined });
    app.get('/count', async () => (await sql<{ n: number }>`select count(*)::int as n from probe`.execute(database.db)).rows[0]);
    await app.ready();
    try {
      assert.equal((await app.inject({ url: '/count' })).statusCode, 200);
      await outage.begin();
      const away = await app.inject({ url: '/count' });
      assert.equal(away.statusCode, 503);
      assert.equal(away.headers['retry-after'], '2');
      assert.deepEqual(away.json(), {
        ok: false,
        error: {
          code: 'unavailable',
          message: 'the database cannot be reached; retry shortly',
          retryable: true,
          reason: 'database_unavailable',
          retry_after: 2,
        },
      });
      outage.end();
      assert.equal((await app.inject({ url: '/count' })).statusCode, 200);
    } finally {
      outage.end();
      await app.close();
    }
  });

  test('LISTEN comes back after its connection is terminated and a reconnect refused, and says anything may have been missed', async () => {
    const heard: string[] = [];
    const stop = await database.listen('probe', (payload) => heard.push(payload));
    try {
      await outage.begin();
      await eventually(() => warnings.includes('notification connection still down; retrying'), 'a reconnect is refused while the database is away');
      outage.end();
      await eventually(() => heard.includes(''), 'the listener’s handlers are told to look again after it reconnects');
      await sql`select pg_notify(current_schema() || '.probe', 'after')`.execute(database.db);
      await eventually(() => heard.includes('after'), 'a notification after the reconnect arrives');
    } finally {
      await stop();
    }
  });
});
