import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { AlarmsRepository } from '../src/alarms/alarms.repository.ts';
import { httpWakeDelivery } from '../src/dispatch/wake-delivery.ts';
import { type Scheduler, startScheduler } from './harness.ts';

for (const engine of testEngines()) {
  describe(`dispatching on ${engine.name}`, () => {
    let s: Scheduler;
    let agent: Awaited<ReturnType<Scheduler['agent']>>;
    let owner: string;
    before(async () => {
      s = await startScheduler(engine, { wakeTimeoutMs: 300 });
      agent = await s.agent();
      owner = agent.key.did.split(':')[2] as string;
    });
    after(() => s.close());
    // Each test starts with nothing due, so earlier tests' retries cannot answer for it.
    beforeEach(async () => {
      await s.database.db.updateTable('alarms').set({ status: 'cancelled', claim_token: null, claimed_until: null }).where('status', '=', 'active').execute();
    });

    // Tests move the clock by days, so each call runs the handshake again for a token valid at the current time.
    const freshToken = async () => (await s.agent(agent.key)).token;
    const create = async (body: Record<string, unknown>) => (await s.call('POST', '/v1/alarms', { token: await freshToken(), body })).body.data.id as string;
    const view = async (id: string) => (await s.call('GET', `/v1/alarms/${id}`, { token: await freshToken() })).body.data;
    const wakesFor = (id: string) => s.receiver.received.filter((wake) => wake.body.alarm_id === id);
    const respond = (status: number) => s.receiver.setBehaviour(() => ({ status }));

    test('a once alarm fires when due, with the wake body and headers, and becomes fired', async () => {
      respond(200);
      const dispatcher = s.makeDispatcher();
      const id = await create({
        kind: 'once',
        wake_message: 'check the oven',
        delay_seconds: 30,
        label: 'oven',
        conversation_id: 'c-9',
        payload: { dish: 'bread' },
      });
      s.clock.advance(29_999);
      await dispatcher.runOnce();
      assert.equal(wakesFor(id).length, 0, 'not due yet');
      s.clock.advance(1);
      const firedAt = s.clock.now().toISOString();
      await dispatcher.runOnce();
      const [wake] = wakesFor(id);
      assert.ok(wake);
      assert.deepEqual(wake.body, {
        user_id: owner,
        did: agent.key.did,
        alarm_id: id,
        label: 'oven',
        wake_message: 'check the oven',
        conversation_id: 'c-9',
        payload: { dish: 'bread' },
        scheduled_for: firedAt,
        fired_at: firedAt,
        attempt: 1,
      });
      assert.equal(wake.headers.authorization, 'Bearer wake-token');
      assert.equal(wake.headers['idempotency-key'], `${id}:${firedAt}`);
      const fired = await view(id);
      assert.equal(fired.status, 'fired');
      assert.equal(fired.last_fired_at, firedAt);
      await dispatcher.runOnce();
      assert.equal(wakesFor(id).length, 1, 'a fired alarm never fires again');
    });

    test('a cron alarm advances from its slot, not from the late moment it fired', async () => {
      respond(200);
      const dispatcher = s.makeDispatcher();
      s.clock.set('2026-03-02T10:00:30Z');
      const id = await create({ kind: 'cron', wake_message: 'tick', cron_expr: '*/5 * * * *' });
      assert.equal((await view(id)).next_fire_at, '2026-03-02T10:05:00.000Z');
      s.clock.set('2026-03-02T10:07:10Z');
      await dispatcher.runOnce();
      const after = await view(id);
      assert.equal(wakesFor(id)[0]?.body.scheduled_for, '2026-03-02T10:05:00.000Z');
      assert.equal(after.status, 'active');
      assert.equal(after.next_fire_at, '2026-03-02T10:10:00.000Z');
    });

    test('after downtime a cron alarm fires once for all missed occurrences, then resumes', async () => {
      respond(200);
      const dispatcher = s.makeDispatcher();
      s.clock.set('2026-03-03T00:00:00Z');
      const id = await create({ kind: 'cron', wake_message: 'hourly', cron_expr: '0 * * * *' });
      s.clock.set('2026-03-03T05:30:00Z');
      await dispatcher.runOnce();
      await dispatcher.runOnce();
      assert.equal(wakesFor(id).length, 1);
      assert.equal((await view(id)).next_fire_at, '2026-03-03T06:00:00.000Z');
    });

    test('a failing receiver walks the ladder with the same Idempotency-Key, then the once alarm fails', async () => {
      respond(503);
      const dispatcher = s.makeDispatcher();
      const id = await create({ kind: 'once', wake_message: 'x', delay_seconds: 0, max_failures: 3 });
      await dispatcher.runOnce();
      let state = await view(id);
      assert.deepEqual([state.status, state.failure_count, state.last_error], ['active', 1, 'wake receiver answered HTTP 503']);
      assert.equal(state.next_fire_at, new Date(s.clock.now().getTime() + 10_000).toISOString());
      s.clock.advance(9_999);
      await dispatcher.runOnce();
      assert.equal(wakesFor(id).length, 1, 'the retry waits for its backoff');
      s.clock.advance(1);
      await dispatcher.runOnce();
      s.clock.advance(30_000);
      await dispatcher.runOnce();
      const wakes = wakesFor(id);
      assert.deepEqual(
        wakes.map((wake) => wake.body.attempt),
        [1, 2, 3],
      );
      assert.equal(new Set(wakes.map((wake) => wake.headers['idempotency-key'])).size, 1);
      state = await view(id);
      assert.deepEqual([state.status, state.failure_count], ['failed', 3]);
      const deleted = await s.call('DELETE', `/v1/alarms/${id}`, { token: await freshToken() });
      assert.deepEqual(deleted.body.data, state, 'DELETE on a failed alarm returns it unchanged');
    });

    test('a success after failures resets failure_count and last_error', async () => {
      respond(500);
      const dispatcher = s.makeDispatcher();
      const id = await create({ kind: 'once', wake_message: 'x', delay_seconds: 0 });
      await dispatcher.runOnce();
      respond(204);
      s.clock.advance(10_000);
      await dispatcher.runOnce();
      const state = await view(id);
      assert.deepEqual([state.status, state.failure_count, state.last_error], ['fired', 0, '']);
    });

    test('a failing cron occurrence is retried, then skipped so the series goes on', async () => {
      respond(500);
      const dispatcher = s.makeDispatcher();
      s.clock.set('2026-03-04T08:00:00Z');
      const id = await create({ kind: 'cron', wake_message: 'daily', cron_expr: '0 9 * * *' });
      s.clock.set('2026-03-04T09:00:00Z');
      for (const wait of [0, 10_000, 30_000, 120_000]) {
        s.clock.advance(wait);
        await dispatcher.runOnce();
      }
      const state = await view(id);
      assert.equal(wakesFor(id).length, 4, 'the first attempt and three retries');
      assert.deepEqual([state.status, state.failure_count, state.next_fire_at], ['active', 4, '2026-03-05T09:00:00.000Z']);
      respond(200);
      s.clock.set('2026-03-05T09:00:00Z');
      await dispatcher.runOnce();
      assert.deepEqual([(await view(id)).failure_count, wakesFor(id).at(-1)?.body.attempt], [0, 1]);
    });

    test('a receiver that is down or does not answer is a failed fire', async () => {
      const id = await create({ kind: 'once', wake_message: 'x', delay_seconds: 0 });
      s.receiver.setBehaviour(() => 'hang');
      await s.makeDispatcher().runOnce();
      assert.match((await view(id)).last_error, /did not answer within 300 ms/);
      const downId = await create({ kind: 'once', wake_message: 'x', delay_seconds: 0 });
      const closedPort = await new Promise<number>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => {
          const { port } = server.address() as AddressInfo;
          server.close(() => resolve(port));
        });
      });
      const unreachable = httpWakeDelivery({ url: `http://127.0.0.1:${closedPort}/internal/wake`, token: '', timeoutMs: 1_000 });
      const result = await unreachable({
        user_id: 'u',
        did: 'did:platform:u:0123456789abcdef',
        alarm_id: downId,
        label: '',
        wake_message: 'x',
        conversation_id: '',
        payload: {},
        scheduled_for: '',
        fired_at: '',
        attempt: 1,
      });
      assert.deepEqual(result, { ok: false, error: 'wake receiver unreachable: ECONNREFUSED', reason: 'unreachable' });
      respond(200);
      await s.makeDispatcher().runOnce();
    });

    test('an instance that dies mid-fire leaves a lease; another instance fires the alarm again with the same key', async () => {
      const id = await create({ kind: 'once', wake_message: 'x', delay_seconds: 5 });
      const arrived = new Promise<void>((resolve) => {
        s.receiver.setBehaviour((wake) => {
          if (wake.body.alarm_id === id) resolve();
          return 'hang';
        });
      });
      const doomed = s.makeDispatcher(60_000);
      await doomed.start();
      s.clock.advance(5_000);
      await arrived;
      await doomed.crash();
      respond(200);
      const survivor = s.makeDispatcher(60_000);
      await survivor.runOnce();
      assert.equal(wakesFor(id).length, 1, 'the lease still holds');
      s.clock.advance(60_000);
      await survivor.runOnce();
      const wakes = wakesFor(id);
      assert.equal(wakes.length, 2);
      assert.equal(wakes[0]?.headers['idempotency-key'], wakes[1]?.headers['idempotency-key']);
      const state = await view(id);
      assert.equal(state.status, 'fired');
      const [row] = await s.database.db.selectFrom('alarms').select('fire_count').where('id', '=', id).execute();
      assert.equal(row?.fire_count, 1, 'the dead instance wrote nothing; the survivor recorded one fire');
    });

    test('an alarm cancelled while its wake is in flight stays cancelled', async () => {
      const inFlight = new Promise<void>((resolve) => {
        s.receiver.setBehaviour(() => {
          resolve();
          return 'hang';
        });
      });
      const id = await create({ kind: 'once', wake_message: 'x', delay_seconds: 0 });
      const dispatcher = s.makeDispatcher();
      const running = dispatcher.runOnce();
      await inFlight;
      assert.equal((await s.call('DELETE', `/v1/alarms/${id}`, { token: await freshToken() })).body.data.status, 'cancelled');
      // The hanging delivery times out as a failure; writing that outcome must not revive the alarm.
      await running;
      const state = await view(id);
      assert.deepEqual([state.status, state.failure_count], ['cancelled', 0]);
    });

    test('a running dispatcher looks again when a failed fire schedules its retry', { timeout: 20_000 }, async () => {
      respond(500);
      const dispatcher = s.makeDispatcher();
      await dispatcher.start();
      const id = await create({ kind: 'once', wake_message: 'retry me', delay_seconds: 0 });
      await s.receiver.waitFor(s.receiver.received.filter((wake) => wake.body.alarm_id !== id).length + 1);
      respond(200);
      // Until the outcome is written the dispatcher sees only the claim's 60 s lease; the written retry must shorten its sleep to 10 s.
      const retryAt = s.clock.now().getTime() + 10_000;
      await eventually(() => dispatcher.sleepingUntil === retryAt, 'the dispatcher re-plans its sleep for the retry');
      const retried = s.receiver.waitFor(s.receiver.received.length + 1);
      s.clock.advance(10_000);
      await retried;
      await dispatcher.stop();
      assert.deepEqual(
        wakesFor(id).map((wake) => wake.body.attempt),
        [1, 2],
      );
      assert.equal((await view(id)).status, 'fired');
    });

    test('an outcome that fails to be written is written again a second later, so the alarm does not fire twice', async () => {
      respond(200);
      let failures = 0;
      const flaky = new (class extends AlarmsRepository {
        override async completeFires(...args: Parameters<AlarmsRepository['completeFires']>) {
          if (failures++ === 0) throw new Error('connection reset');
          return super.completeFires(...args);
        }
      })(s.database.db, s.clock);
      const id = await create({ kind: 'once', wake_message: 'x', delay_seconds: 0 });
      const running = s.makeDispatcher(60_000, flaky).runOnce();
      await eventually(() => failures === 1, 'the first write fails');
      s.clock.advance(1_000);
      await running;
      assert.equal(failures, 2);
      assert.equal((await view(id)).status, 'fired');
      await s.makeDispatcher().runOnce();
      assert.equal(wakesFor(id).length, 1);
    });

    test('a dispatcher killed while outcomes wait to be written drops them and goes quiet', { timeout: 20_000 }, async () => {
      respond(200);
      const { promise: gate, resolve: openGate } = Promise.withResolvers<void>();
      const writes: number[] = [];
      const stalled = new (class extends AlarmsRepository {
        override async completeFires(...args: Parameters<AlarmsRepository['completeFires']>) {
          writes.push(args[1].fired.length + args[1].outcomes.length);
          await gate;
          return super.completeFires(...args);
        }
      })(s.database.db, s.clock);
      const first = await create({ kind: 'once', wake_message: 'first', delay_seconds: 0 });
      const dispatcher = s.makeDispatcher(60_000, stalled);
      const running = dispatcher.runOnce();
      await eventually(() => writes.length === 1, 'the first outcome write starts and stalls');
      const second = await create({ kind: 'once', wake_message: 'second', delay_seconds: 0 });
      const moreRunning = dispatcher.runOnce();
      // Delivered and finished (in flight no more): its outcome now waits behind the stalled write.
      await eventually(() => wakesFor(second).length === 1 && dispatcher.inFlight === 0, 'the second wake is done while the first write stalls');
      await dispatcher.crash();
      openGate();
      await Promise.all([running, moreRunning]);
      await eventually(() => dispatcher.idle, 'the killed dispatcher has nothing left to do', 10_000);
      assert.deepEqual(writes, [1], 'nothing is written after the kill');
      assert.equal((await view(first)).status, 'fired');
      assert.equal((await view(second)).status, 'active', 'the unwritten outcome is left to the lease');
    });

    test('a sleeping dispatcher is woken by a new earlier alarm and fires it when due, then stops gracefully', async () => {
      respond(200);
      await s.makeDispatcher().runOnce();
      const dispatcher = s.makeDispatcher();
      await dispatcher.start();
      const before = s.receiver.received.length;
      const id = await create({ kind: 'once', wake_message: 'soon', delay_seconds: 45 });
      const delivered = s.receiver.waitFor(before + 1);
      // Whether the NOTIFY reaches the sleeping dispatcher before or after this, moving time 45 s must fire it:
      // before, it re-planned its sleep for 45 s; after, the NOTIFY wakes it from its 60 s idle sleep.
      s.clock.advance(45_000);
      await delivered;
      assert.equal(wakesFor(id).length, 1);
      await dispatcher.stop();
      assert.equal((await view(id)).status, 'fired', 'stop writes the outcomes of finished deliveries');
    });
  });
}
