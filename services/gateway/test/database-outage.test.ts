import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { uuidv7 } from '@platform/kit/ids';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { drillAnswer, driveThroughOutage } from '@platform/testkit/outage-drill';
import { sql } from 'kysely';
import { BudgetRepository, type LedgerEntry } from '../src/metering/budget.repository.ts';
import { BudgetLeases } from '../src/metering/budget-leases.ts';
import { callerHeaders, type Gateway, models, newActor, startGateway, today } from './harness.ts';

const behind = await postgresBehindLink();

describe('the gateway while its database goes away', { skip: behind ? false : 'needs TEST_DATABASE_URL', timeout: 60_000 }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let gateway: Gateway;
  before(async () => {
    gateway = await startGateway(engine);
  });
  after(async () => {
    outage.end();
    await gateway?.close();
    await close();
  });

  test('answers 503 service_unavailable with Retry-After in OpenAI’s shape, serves again after, and books each answered call once', async () => {
    // Two actors served from slices in memory (their bookings are what the outage cuts off), and every third call a
    // new actor, whose first call needs a grant from the database.
    const regulars = [newActor(), newActor()];
    const refused: Array<{ actor: string; intent: string }> = [];
    const { acknowledged } = await driveThroughOutage({
      outage,
      retryable: (body) => (body as { error?: { type?: string } }).error?.type === 'service_unavailable',
      call: async (n) => {
        const actor = n % 3 === 0 ? newActor() : (regulars[n % 2] as string);
        const intent = `intent-${n}`;
        const answer = await gateway.http('POST', '/v1/chat/completions', {
          headers: callerHeaders(actor, 'compiler', { 'x-platform-intent-id': intent }),
          body: { model: models.small, messages: [{ role: 'user', content: 'hi [words=2]' }] },
        });
        if (answer.status === 503) {
          assert.equal(answer.json.error.code, 'database_unavailable');
          refused.push({ actor, intent });
        }
        return { answer: drillAnswer(answer), ack: { actor, intent } };
      },
    });
    const bookedIntents = async (actor: string) => (await gateway.ledger(actor)).map((row) => row.intent_id);
    for (const { actor, intent } of acknowledged)
      assert.equal((await bookedIntents(actor)).filter((booked) => booked === intent).length, 1, `the answered call ${intent} of ${actor} is booked once`);
    for (const { actor, intent } of refused) assert.ok(!(await bookedIntents(actor)).includes(intent), `the refused call ${intent} is not booked`);
  });
});

/** A booking as `gateway_apply` takes it (the row BudgetRepository sends), of `units` taken from the lease and charged. */
function bookingOp(booking: { holder: string; actor: string; i: number; units: number; at: Date }) {
  return {
    i: booking.i,
    op: 'book',
    holder: booking.holder,
    actor: booking.actor,
    day: today,
    take: String(booking.units),
    cost: String(booking.units),
    debit: true,
    id: uuidv7(),
    created_at: booking.at.toISOString(),
    slot: 'compiler',
    model: models.small,
    kind: 'chat',
    streamed: false,
    rate_table_v: 1,
    input_tokens: 1,
    output_tokens: 1,
    basis: 'usage',
    intent_id: null,
    goal_id: null,
    kind_route: null,
  };
}

for (const engine of testEngines())
  describe(`gateway_apply on ${engine.name}`, () => {
    let gateway: Gateway;
    before(async () => {
      gateway = await startGateway(engine);
    });
    after(() => gateway.close());

    test('a booking sent again under its id (its first commit landed, the answer was lost) is applied once, in a later batch or twice in one', async () => {
      const { db } = gateway.database;
      const repository = new BudgetRepository(db, gateway.clock, { defaultCapUnits: 1_000n, asyncCommit: false, lockRows: engine.name === 'postgres' });
      const [holder, actor] = [randomUUID(), newActor()];
      await repository.heartbeat(holder, true, 3_600_000);
      await repository.grant({ holder, actor, day: today }, 100n, 100n, false);
      const booking = bookingOp({ holder, actor, i: 0, units: 40, at: gateway.clock.now() });
      const apply = (ops: object[]) =>
        sql`select * from gateway_apply(${JSON.stringify(ops)}::jsonb, 1000::int8, false, ${gateway.clock.now().toISOString()}::timestamptz, false, true, false)`.execute(
          db,
        );
      const leaseUnits = async () => (await db.selectFrom('budget_leases').select('units').where('holder', '=', holder).executeTakeFirstOrThrow()).units;
      await apply([booking]);
      await apply([booking]);
      assert.equal((await gateway.ledger(actor)).length, 1);
      assert.equal(await leaseUnits(), 60n);
      assert.deepEqual(await gateway.spend(actor), { spent: 40n, reserved: 60n, calls: 1 });
      // In one batch: the booking again, another booking twice over, and a return of 5 units, each applied once.
      const another = { ...booking, id: uuidv7(), take: '30', cost: '30' };
      const giveBack = { i: 3, op: 'return', holder, actor, day: today, take: '5', cost: '0', debit: false, announce: false };
      await apply([booking, { ...another, i: 1 }, { ...another, i: 2 }, giveBack]);
      assert.equal((await gateway.ledger(actor)).length, 2);
      assert.equal(await leaseUnits(), 25n);
      assert.deepEqual(await gateway.spend(actor), { spent: 70n, reserved: 25n, calls: 2 });
    });

    test('a batch finds its rows by key: no table of the ledger, the days or the leases is scanned whole, whatever their size', async () => {
      const { db } = gateway.database;
      const lockRows = engine.name === 'postgres';
      const repository = new BudgetRepository(db, gateway.clock, { defaultCapUnits: 1_000n, asyncCommit: false, lockRows });
      const holder = randomUUID();
      await repository.heartbeat(holder, true, 3_600_000);
      // Enough actors with a day row, a lease and ledger rows that a scan would be a choice the planner could make.
      const actors = Array.from({ length: 60 }, () => newActor());
      for (const actor of actors) await repository.grant({ holder, actor, day: today }, 100n, 100n, false);
      await sql`analyze`.execute(db);
      const booking = (actor: string, i: number) => bookingOp({ holder, actor, i, units: 10, at: gateway.clock.now() });
      const grant = { i: 2, op: 'grant', holder, actor: actors[2], day: today, need: '10', want: '10', recall: false };
      const scans = await db.transaction().execute(async (trx) => {
        // The session's counts not yet reported, read before and after inside one transaction (nothing is reported
        // while a transaction is open), so the difference is the call's alone.
        const seqScans = async () => {
          const counted = await sql<{ relname: string; seq_scan: number }>`
            select relname, seq_scan::int as seq_scan from pg_stat_xact_user_tables where relname in ('ledger', 'daily_spend', 'budget_leases')`.execute(trx);
          return new Map(counted.rows.map((row) => [row.relname, row.seq_scan]));
        };
        const before = await seqScans();
        const at = gateway.clock.now().toISOString();
        const ops = JSON.stringify([booking(actors[0] as string, 0), booking(actors[1] as string, 1), grant]);
        await sql`select * from gateway_apply(${ops}::jsonb, 1000::int8, false, ${at}::timestamptz, ${lockRows}, true, true)`.execute(trx);
        const after = await seqScans();
        return Object.fromEntries([...after].map(([table, count]) => [table, count - (before.get(table) ?? 0)]));
      });
      assert.deepEqual(scans, { ledger: 0, daily_spend: 0, budget_leases: 0 });
      assert.deepEqual(await gateway.spend(actors[0] as string), { spent: 10n, reserved: 90n, calls: 1 });
      assert.deepEqual(await gateway.spend(actors[2] as string), { spent: 0n, reserved: 110n, calls: 0 });
    });

    test('a booking that joins the batch of a top-up grant before it is counted once in the spent the next call is shown', async () => {
      const repository = new BudgetRepository(gateway.database.db, gateway.clock, {
        defaultCapUnits: 1_000n,
        asyncCommit: false,
        lockRows: engine.name === 'postgres',
      });
      const leases = new BudgetLeases({ repository, clock: gateway.clock, logger: silentLogger, settings: { ttlMs: 3_600_000, sliceCalls: 1 } });
      const actor = newActor();
      const entry = (costUnits: bigint): LedgerEntry => ({
        actor,
        day: today,
        slot: 'compiler',
        model: models.small,
        kind: 'chat',
        streamed: false,
        rateTableVersion: 1,
        inputTokens: 1,
        outputTokens: 1,
        costUnits,
        basis: 'usage',
        intentId: null,
        goalId: null,
        kindRoute: null,
      });
      const reserved = async () => {
        const outcome = await leases.reserve(actor, today, 10n);
        assert.ok(outcome.accepted);
        return outcome;
      };
      await reserved(); // a grant of 20: this call's 10 and one more call's
      const second = await reserved(); // fills the slice, so a top-up grant goes out behind it
      // Settled in the same turn: the booking joins the top-up's batch, which applies bookings before grants.
      await leases.settle(second.reservation, entry(7n));
      await repository.flushed();
      const third = await reserved();
      assert.equal(third.spentBeforeUnits, 7n, 'spent as the next call is shown: the booking once');
      assert.deepEqual(await gateway.spend(actor), { spent: 7n, reserved: 23n, calls: 1 });
      await leases.retire();
    });
  });
