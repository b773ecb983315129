import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import { postgresEngine } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { ManualClock } from '@platform/testkit/manual-clock';
import { startWakeReceiver, type WakeReceiver } from '@platform/testkit/wake-receiver';
import { sql } from 'kysely';
import pino from 'pino';
import { AlarmsRepository, alarmsChannel } from '../src/alarms/alarms.repository.ts';
import { migrations } from '../src/db/migrations.ts';
import type { SchedulerSchema } from '../src/db/schema.ts';
import { Dispatcher } from '../src/dispatch/dispatcher.ts';
import { httpWakeDelivery } from '../src/dispatch/wake-delivery.ts';

const engine = postgresEngine();
const alarmCount = 2000;
const leaseMs = 30_000;
// Warnings and errors from the dispatchers, shown when an assertion fails.
const problems: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => problems.push(line) });

// Several dispatchers on one PostgreSQL, each with its own connection pool, as separate processes would have.
describe('several dispatcher instances on one PostgreSQL', { skip: engine ? false : 'needs TEST_DATABASE_URL', timeout: 120_000 }, () => {
  let fresh: Awaited<ReturnType<NonNullable<typeof engine>['fresh']>>;
  const opened: Database<SchedulerSchema>[] = [];
  let receiver: WakeReceiver;
  let clock: ManualClock;

  before(async () => {
    fresh = await (engine as NonNullable<typeof engine>).fresh();
    const setup = await openDatabase<SchedulerSchema>(fresh.options);
    opened.push(setup);
    await migrate(setup, 'scheduler', migrations);
    receiver = await startWakeReceiver();
  });
  const running: Dispatcher[] = [];
  after(async () => {
    // A failed assertion may leave instances running; stop them so the process can end.
    await Promise.all(running.map((instance) => instance.crash()));
    await receiver.close();
    for (const database of opened) await database.close();
    await fresh.dispose();
  });

  async function seedDueAlarms(count: number): Promise<void> {
    const [setup] = opened as [Database<SchedulerSchema>];
    await sql`delete from alarms`.execute(setup.db);
    await sql`
      insert into alarms (id, owner_did, owner_user_id, label, kind, cron_expr, timezone, next_fire_at, occurrence_at, conversation_id,
        wake_message, payload, status, idempotency_key, request_hash, max_failures, failure_count, attempt, last_error, created_at)
      select gen_random_uuid(), 'did:platform:u:0123456789abcdef', 'u', 'load', 'once', '', 'UTC', ${clock.now().toISOString()}::timestamptz,
        ${clock.now().toISOString()}::timestamptz, '', 'wake ' || n, '{}'::jsonb, 'active', '', '', 5, 0, 1, '', ${clock.now().toISOString()}::timestamptz
      from generate_series(1, ${count}) as n`.execute(setup.db);
    receiver.received.length = 0;
  }

  async function startInstances(count: number): Promise<Dispatcher[]> {
    const instances: Dispatcher[] = [];
    for (let i = 0; i < count; i++) {
      const database = await openDatabase<SchedulerSchema>(fresh.options);
      opened.push(database);
      const dispatcher = new Dispatcher({
        repository: new AlarmsRepository(database.db, clock),
        deliver: httpWakeDelivery({ url: receiver.url, token: '', timeoutMs: 5_000 }),
        clock,
        logger,
        onAlarmCreated: (hint) => database.listen(alarmsChannel, hint),
        concurrency: 64,
        leaseMs,
        maxIdleMs: 600_000,
      });
      await dispatcher.start();
      instances.push(dispatcher);
      running.push(dispatcher);
    }
    return instances;
  }

  async function fireCounts(): Promise<Map<number, number>> {
    const [setup] = opened as [Database<SchedulerSchema>];
    const rows = await sql<{ fire_count: number; alarms: string }>`select fire_count, count(*)::text as alarms from alarms group by fire_count`.execute(
      setup.db,
    );
    return new Map(rows.rows.map((row) => [row.fire_count, Number(row.alarms)]));
  }

  const distinctKeys = () => new Set(receiver.received.map((wake) => wake.headers['idempotency-key'])).size;

  test(`three instances fire ${alarmCount} alarms due at once, each exactly once`, async () => {
    clock = new ManualClock('2026-05-01T00:00:00Z');
    await seedDueAlarms(alarmCount);
    const instances = await startInstances(3);
    await receiver.waitFor(alarmCount);
    await Promise.all(instances.map((instance) => instance.stop()));
    assert.equal(receiver.received.length, alarmCount, 'no alarm was delivered twice');
    assert.equal(distinctKeys(), alarmCount);
    assert.deepEqual(await fireCounts(), new Map([[1, alarmCount]]));
  });

  test('when one instance dies mid-run, the others take over its claims once the lease ends', async () => {
    clock = new ManualClock('2026-05-02T00:00:00Z');
    await seedDueAlarms(alarmCount);
    const [doomed, ...survivors] = (await startInstances(3)) as [Dispatcher, ...Dispatcher[]];
    await receiver.waitFor(alarmCount / 4);
    await doomed.crash();
    const [setupDb] = opened as [Database<SchedulerSchema>];
    // What the dead instance held unrecorded (in flight, or delivered with the outcome not yet written) is what may repeat.
    const abandoned = Number(
      (await sql<{ n: string }>`select count(*)::text as n from alarms where claim_token = ${doomed.claimToken}`.execute(setupDb.db)).rows[0]?.n,
    );
    // Everything but the dead instance's claims gets delivered and recorded; those wait for the lease.
    const [setup] = opened as [Database<SchedulerSchema>];
    const count = async (query: ReturnType<typeof sql<{ n: string }>>) => Number((await query.execute(setup.db)).rows[0]?.n);
    const stranded = () => count(sql<{ n: string }>`select count(*)::text as n from alarms where status = 'active'`);
    const othersPending = () =>
      count(sql<{ n: string }>`select count(*)::text as n from alarms where status = 'active' and claim_token is distinct from ${doomed.claimToken}`);
    await eventually(
      async () => (await othersPending()) === 0,
      () => `the survivors record every alarm but the dead instance's; dispatcher log: ${problems.join('')}`,
      20_000,
    );
    // An outcome write the dead instance had already sent may still land after `abandoned` was counted, so
    // what is left can be fewer than that count, but every row left must be one of its claims.
    const left = await stranded();
    const deadClaimsLeft = await count(
      sql<{ n: string }>`select count(*)::text as n from alarms where status = 'active' and claim_token = ${doomed.claimToken}`,
    );
    assert.equal(left, deadClaimsLeft, "only the dead instance's claims are left");
    assert.ok(left > 0 && left <= abandoned, 'the dead instance held claims, and no others were added to them');
    clock.advance(leaseMs);
    await receiver.waitFor(alarmCount);
    await eventually(
      async () => (await stranded()) === 0,
      () => `the survivors take over the expired leases; dispatcher log: ${problems.join('')}`,
      20_000,
    );
    await Promise.all(survivors.map((survivor) => survivor.stop()));
    assert.equal(distinctKeys(), alarmCount, 'every alarm reached the receiver');
    assert.ok(
      receiver.received.length - alarmCount <= abandoned,
      `repeats (${receiver.received.length - alarmCount}) only for wakes the dead instance had in flight (${abandoned})`,
    );
    assert.deepEqual(await fireCounts(), new Map([[1, alarmCount]]), 'each alarm is recorded as fired exactly once');
  });
});
