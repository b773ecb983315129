import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { testEngines } from '@platform/testkit/databases';
import { type Scheduler, startScheduler } from './harness.ts';

/*
 * SCHEDULER_WAKE_CHECK: an alarm whose wakes its agent would refuse is refused when it is made (it was accepted as
 * `active`, then every wake was refused 403 and it failed some 13 minutes later); the receiver is asked with the wake
 * the alarm would send, marked `check`, and takes nothing.
 */

const alarm = { kind: 'once', wake_message: 'water the plants', delay_seconds: 60, label: 'plants' };
const refusal = JSON.stringify({ ok: false, error: { code: 'forbidden', message: 'this wake is for another agent', retryable: false } });

for (const engine of testEngines()) {
  describe(`the wake check when an alarm is made, on ${engine.name}`, () => {
    let s: Scheduler;
    before(async () => {
      s = await startScheduler(engine, { wakeCheck: true, wakeTimeoutMs: 500 });
    });
    after(() => s.close());
    const alarms = () => s.database.db.selectFrom('alarms').select(['owner_did']).execute();

    test('a DID its agent refuses: 403 wake_refused naming the receiver’s reason, and no alarm; the check carried the wake, marked, with no alarm id', async () => {
      s.receiver.setBehaviour(() => ({ status: 403, body: refusal }));
      const { key, token } = await s.agent(generateAgentKey(randomUUID()));
      const before = s.receiver.received.length;
      const created = await s.call('POST', '/v1/alarms', { token, body: alarm });
      assert.equal(created.status, 403, JSON.stringify(created.body));
      assert.equal(created.body.error?.code, 'forbidden');
      assert.equal(created.body.error?.reason, 'wake_refused');
      assert.match(created.body.error?.message ?? '', /could not wake its agent: the wake receiver answered 403 \(this wake is for another agent\)/);
      assert.deepEqual(await alarms(), []);
      const check = s.receiver.received[before];
      assert.equal(check?.body.check, true);
      assert.deepEqual([check?.body.did, check?.body.alarm_id, check?.body.attempt, check?.body.label], [key.did, '', 0, 'plants']);
      assert.match(String(check?.headers['idempotency-key']), /^check:/);
      assert.equal(check?.headers.authorization, 'Bearer wake-token');
    });

    test('a DID it takes: the alarm is made, and asked once for alarms in a row; a body the scheduler refuses asks nobody', async () => {
      s.receiver.setBehaviour(() => ({ status: 200 }));
      const { token } = await s.agent(generateAgentKey(randomUUID()));
      const before = s.receiver.received.length;
      for (const _ of [1, 2]) assert.equal((await s.call('POST', '/v1/alarms', { token, body: alarm })).status, 200);
      assert.equal(s.receiver.received.length, before + 1, 'one check for two alarms of the same DID within a minute');
      assert.equal((await s.call('POST', '/v1/alarms', { token, body: { ...alarm, delay_seconds: -1 } })).status, 400);
      assert.equal(s.receiver.received.length, before + 1);
    });

    test('a receiver that does not say (5xx, no answer in time, a 400 from one that does not know the check): the alarm is made', async () => {
      for (const behaviour of [() => ({ status: 503 }), () => ({ status: 400 }), () => 'hang' as const]) {
        s.receiver.setBehaviour(behaviour);
        const { token } = await s.agent(generateAgentKey(randomUUID()));
        const created = await s.call('POST', '/v1/alarms', { token, body: alarm });
        assert.equal(created.status, 200, JSON.stringify(created.body));
      }
    });
  });
}
