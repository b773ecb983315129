import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { eventually } from '@platform/testkit/eventually';
import { driveThroughOutage, injectedAnswer } from '@platform/testkit/outage-drill';
import type { Dispatcher } from '../src/dispatch/dispatcher.ts';
import { type Scheduler, startScheduler, transportToken } from './harness.ts';

const behind = await postgresBehindLink();

describe('the scheduler while its database goes away', { skip: behind ? false : 'needs TEST_DATABASE_URL', timeout: 60_000 }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let s: Scheduler;
  let dispatcher: Dispatcher;
  before(async () => {
    s = await startScheduler(engine);
    dispatcher = s.makeDispatcher();
    await dispatcher.start();
  });
  after(async () => {
    outage.end();
    await s?.close();
    await close();
  });

  test('defers alarm writes with 503 and Retry-After, then takes them again, and every alarm it accepted fires', async () => {
    const { token } = await s.agent();
    const { acknowledged } = await driveThroughOutage({
      outage,
      call: async (n) => {
        const body = { kind: 'once', wake_message: `wake ${n}`, delay_seconds: 60, idempotency_key: `outage-${n}` };
        const answer = await s.app.inject({
          method: 'POST',
          url: '/v1/alarms',
          headers: { authorization: `Bearer ${transportToken}`, 'x-scheduler-agent': token },
          payload: body,
        });
        return { answer: injectedAnswer(answer), ack: answer.json().data?.id as string };
      },
    });
    for (const id of acknowledged) assert.equal((await s.call('GET', `/v1/alarms/${id}`, { token })).body.data?.status, 'active', `accepted alarm ${id}`);
    // The dispatcher kept running through the outage (its cycles failed and were retried): the alarms fire when due.
    s.clock.advance(60_000);
    const woken = () => new Set(s.receiver.received.map((wake) => wake.body.alarm_id));
    await eventually(() => {
      if (acknowledged.every((id) => woken().has(id))) return true;
      // A cycle that failed waits a second of the scheduler's clock before the next.
      s.clock.advance(1_000);
      return false;
    }, 'every accepted alarm fires');
  });
});
