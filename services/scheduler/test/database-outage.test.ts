import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { type DatabaseLink, outageOf, postgresBehindLink, startDatabaseLink } from '@platform/testkit/database-outage';
import { eventually, pollUntil } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { drillAnswer, driveThroughOutage, injectedAnswer } from '@platform/testkit/outage-drill';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import { startWakeReceiver, type WakeReceiver } from '@platform/testkit/wake-receiver';
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

describe('the scheduler as `platform serve` starts it, when PostgreSQL ends its sessions', {
  skip: behind ? false : 'needs TEST_DATABASE_URL',
  timeout: 90_000,
}, () => {
  const adminUrl = process.env.TEST_DATABASE_URL as string;
  let database: TempDatabase;
  let link: DatabaseLink;
  let receiver: WakeReceiver;
  let scheduler: ServiceProcess;
  before(async () => {
    database = await createTempDatabase(adminUrl, 'platform');
    link = await startDatabaseLink(database.url);
    receiver = await startWakeReceiver();
    scheduler = await startServiceProcess('scheduler', {
      DATABASE_URL: link.via(database.url),
      SCHEDULER_TOKEN: transportToken,
      SCHEDULER_WAKE_URL: receiver.url,
      SCHEDULER_WAKE_TOKEN: 'wake-token',
    });
  });
  after(async () => {
    await scheduler?.stop();
    await receiver?.close();
    await link?.close();
    await database?.drop();
  });

  test('stays up through `pg_terminate_backend` of its database under load, defers with 503, and fires every alarm it took', async () => {
    const key = generateAgentKey();
    const call = (path: string, body: unknown, token?: string) =>
      httpCall(scheduler.url, 'POST', path, { bearer: transportToken, body, ...(token ? { headers: { 'x-scheduler-agent': token } } : {}) });
    const challenge = await call('/v1/agent/auth/challenge', { did: key.did });
    const nonce = challenge.json.data.nonce as string;
    const verified = await call('/v1/agent/auth/verify', {
      did: key.did,
      public_key: key.publicKeyHex,
      nonce,
      signature: key.sign(challenge.json.data.message),
    });
    const token = verified.json.data.token as string;
    // The issue's own statement, on the service's whole database, while the dispatcher claims and writes outcomes.
    const outage = outageOf(link, adminUrl, () => [{ database: database.name }]);
    const { acknowledged } = await driveThroughOutage({
      outage,
      alive: () =>
        scheduler.process.exitCode === null ? undefined : `the scheduler exited with ${scheduler.process.exitCode}:\n${scheduler.logs.slice(-5).join('\n')}`,
      call: async (n) => {
        const created = await call('/v1/alarms', { kind: 'once', wake_message: `wake ${n}`, delay_seconds: 0, idempotency_key: `process-${n}` }, token);
        return { answer: drillAnswer(created), ack: created.json?.data?.id as string };
      },
    });
    const woken = () => new Set(receiver.received.map((wake) => wake.body.alarm_id));
    await pollUntil(() => acknowledged.every((id) => woken().has(id)), 'every alarm the process took fires', { timeoutMs: 30_000, intervalMs: 50 });
    assert.equal(scheduler.process.exitCode, null, 'still running');
  });
});
