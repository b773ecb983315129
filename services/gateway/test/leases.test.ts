import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresEngine, type TestEngine, testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import OpenAI from 'openai';
import { formatCredit } from '../src/metering/credit.ts';
import { callerHeaders, type Gateway, gatewayToken, models, newActor, startGateway, today } from './harness.ts';
import { startInstanceProcess } from './instance-process.ts';

// Each call reserves about 0.0204 credit (its body and 10 output tokens) and reports 0.012 of usage.
const call = { model: models.small, messages: [{ role: 'user' as const, content: '[prompt=100][words=10]' }], max_tokens: 10 };
const callCost = 12_000_000_000n;

/** 200 or the refusal's status. */
function statusOf(gw: Gateway, actor: string): Promise<number> {
  return gw
    .client(callerHeaders(actor))
    .chat.completions.create(call)
    .then(
      () => 200,
      (error: unknown) => (error instanceof OpenAI.APIError ? (error.status ?? 0) : 0),
    );
}

/** The actor's day row as the database has it right now: no instance is asked to settle first. */
async function dayRow(gw: Gateway, actor: string) {
  const row = await gw.database.db.selectFrom('daily_spend').selectAll().where('actor', '=', actor).where('day', '=', today).executeTakeFirst();
  return { spent: row?.spent_units ?? 0n, reserved: row?.reserved_units ?? 0n };
}

/** Another instance on the same data: on PostgreSQL with a pool, clock and upstream of its own; PGlite has one connection. */
function sibling(engine: TestEngine, gw: Gateway, env: Record<string, string> = {}): Promise<Gateway> {
  return engine.name === 'postgres' ? startGateway(engine, { attach: gw.databaseOptions, env }) : startGateway(engine, { besides: gw, env });
}

for (const engine of testEngines()) {
  describe(`budget leases across instances on ${engine.name}`, () => {
    const instances: Gateway[] = [];
    before(async () => {
      instances.push(await startGateway(engine));
      for (let i = 0; i < 3; i++) instances.push(await sibling(engine, instances[0] as Gateway));
    });
    after(async () => {
      for (const gw of instances.slice(1)) await gw.close();
      await instances[0]?.close();
    });

    test('four instances hammering one actor never pass its cap, book every answer, and leave no budget behind', async () => {
      const [first] = instances as [Gateway];
      const actor = newActor();
      const capUnits = 500_000_000_000n; // 0.5 credit: 41 calls' worth of usage, of the 160 sent
      await first.admin('PUT', `/actors/${actor}/cap`, { limit_credit: formatCredit(capUnits) });
      const upstreams = [...new Set(instances.map((gw) => gw.upstream))];
      const forwardedBefore = upstreams.reduce((sum, upstream) => sum + upstream.received.length, 0);
      const outcomes = await Promise.all(instances.flatMap((gw) => Array.from({ length: 40 }, () => statusOf(gw, actor))));
      const served = outcomes.filter((status) => status === 200).length;
      assert.equal(outcomes.filter((status) => status === 429).length, outcomes.length - served, `only 200s and 429s: ${[...new Set(outcomes)].join(', ')}`);
      for (const gw of instances) await gw.spend(actor);
      const totals = await first.spend(actor);
      assert.ok(totals.spent <= capUnits, `spent ${formatCredit(totals.spent)} is within the cap`);
      assert.equal(totals.spent, BigInt(served) * callCost, 'every answer is booked');
      assert.equal(totals.reserved, 0n, 'every slice went back once the instances settled');
      assert.equal((await first.ledger(actor)).length, served);
      const forwarded = upstreams.reduce((sum, upstream) => sum + upstream.received.length, 0) - forwardedBefore;
      assert.equal(forwarded, served, 'refused calls never reached an upstream');
      // Nothing is stuck in a slice once the storm is over: one instance can spend what is left, to the last call.
      for (let i = 0; i < 50 && (await statusOf(first, actor)) === 200; i++);
      const end = await first.spend(actor);
      assert.ok(end.spent <= capUnits && capUnits - end.spent < 25_000_000_000n, `left ${formatCredit(capUnits - end.spent)}, less than one reservation`);
    });

    test('a call that finds the budget in another instance’s unused slice gets it: the slice is recalled and the call asks again', async () => {
      const [holder, asker] = instances as [Gateway, Gateway];
      const actor = newActor();
      await holder.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0.1' });
      assert.equal(await statusOf(holder, actor), 200);
      assert.ok((await dayRow(holder, actor)).reserved >= 100_000_000_000n - 2n * callCost, 'the rest of the cap sits in the first instance’s slice');
      assert.equal(await statusOf(asker, actor), 200);
      assert.equal(await statusOf(holder, actor), 200, 'and the first instance, asking in turn, gets what is left');
    });

    test('a cap set on one instance reaches the slices every other instance holds', async () => {
      const [holder, operator] = instances as [Gateway, Gateway];
      const actor = newActor();
      assert.equal(await statusOf(holder, actor), 200);
      assert.ok((await dayRow(holder, actor)).reserved > 0n, 'the holder keeps a slice of the default cap');
      await operator.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0' });
      await eventually(async () => (await dayRow(holder, actor)).reserved === 0n, 'the holder hears of the cap and gives its slice back');
      assert.equal(await statusOf(holder, actor), 429);
    });

    test('a slice no call has used for a lease TTL goes back by itself, on the clock', async () => {
      const quiet = await sibling(engine, instances[0] as Gateway, { GATEWAY_LEASE_TTL_MS: '30000' });
      try {
        const actor = newActor();
        assert.equal(await statusOf(quiet, actor), 200);
        await eventually(async () => (await dayRow(quiet, actor)).spent === callCost, 'booked');
        assert.ok((await dayRow(quiet, actor)).reserved > 0n, 'the rest of the slice is held');
        quiet.clock.advance(30_000);
        await eventually(async () => (await dayRow(quiet, actor)).reserved === 0n, 'given back once idle for the TTL');
        assert.equal((await dayRow(quiet, actor)).spent, callCost);
      } finally {
        await quiet.close();
      }
    });

    test('an instance whose lease lapsed (no heartbeat for a TTL) drops its slices, which come back, and carries on under a new holder', async () => {
      const stalled = await sibling(engine, instances[0] as Gateway, { GATEWAY_LEASE_TTL_MS: '30000' });
      try {
        const actor = newActor();
        assert.equal(await statusOf(stalled, actor), 200);
        await eventually(async () => (await dayRow(stalled, actor)).spent === callCost, 'booked');
        // Two TTLs in one step: the housekeeping wakes once, finds the holder lapsed, and reclaims its leases.
        stalled.clock.advance(60_000);
        await eventually(async () => (await dayRow(stalled, actor)).reserved === 0n, 'the lapsed holder’s slice is back');
        assert.equal(await statusOf(stalled, actor), 200);
        assert.deepEqual(await stalled.spend(actor), { spent: 2n * callCost, reserved: 0n, calls: 2 });
      } finally {
        await stalled.close();
      }
    });

    test('with GATEWAY_LEASE_SLICE_CALLS=0 an instance keeps less than one call’s reservation, not a slice', async () => {
      const exact = await sibling(engine, instances[0] as Gateway, { GATEWAY_LEASE_SLICE_CALLS: '0' });
      try {
        const actor = newActor();
        assert.equal(await statusOf(exact, actor), 200);
        await eventually(async () => (await dayRow(exact, actor)).spent === callCost, 'booked');
        assert.ok(
          (await dayRow(exact, actor)).reserved < 20_000_000_000n,
          'only what the call reserved beyond its cost is left (a slice would hold about 0.16)',
        );
      } finally {
        await exact.close();
      }
    });

    test('an instance that stops gives its slices back at once', async () => {
      const leaving = await sibling(engine, instances[0] as Gateway);
      const actor = newActor();
      assert.equal(await statusOf(leaving, actor), 200);
      assert.ok((await dayRow(leaving, actor)).reserved > 0n);
      await leaving.close();
      assert.deepEqual(await dayRow(instances[0] as Gateway, actor), { spent: callCost, reserved: 0n });
    });
  });
}

const postgres = postgresEngine();

describe('a killed instance', { skip: postgres ? false : 'needs TEST_DATABASE_URL' }, () => {
  test('its slice stays leased until its lease expires on the clock, then comes back to the other instances', async () => {
    const env = { GATEWAY_LEASE_TTL_MS: '30000' };
    const gw = await startGateway(postgres as TestEngine, { env });
    const { logger: _logger, ...attach } = gw.databaseOptions;
    const doomed = await startInstanceProcess({ attach, env });
    try {
      const actor = newActor();
      await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0.1' });
      const doomedClient = new OpenAI({ baseURL: `${doomed.info.url}/v1`, apiKey: gatewayToken, defaultHeaders: callerHeaders(actor), maxRetries: 0 });
      await doomedClient.chat.completions.create(call);
      await eventually(async () => (await dayRow(gw, actor)).spent === callCost, 'the killed instance booked its call');
      doomed.kill();
      await doomed.exited;
      assert.deepEqual(await dayRow(gw, actor), { spent: callCost, reserved: 100_000_000_000n - callCost }, 'the rest of the cap is in its slice');
      assert.equal(await statusOf(gw, actor), 429, 'a live lease is never taken from its holder');
      gw.clock.advance(30_001);
      assert.equal(await statusOf(gw, actor), 200, 'the expired slice came back');
      assert.deepEqual(await gw.spend(actor), { spent: 2n * callCost, reserved: 0n, calls: 2 });
    } finally {
      doomed.kill();
      await gw.close();
    }
  });
});
