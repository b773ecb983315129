import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentKeyFromSeed } from '@platform/client/agent-key';
import { SchedulerClient } from '@platform/client/scheduler-client';
import { freePort } from '@platform/kit/free-port';
import { testEngines } from '@platform/testkit/databases';
import { eventually, pollUntil } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { railScript } from '@platform/testkit/rail-script';
import { type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { adminToken, audience, type IdentityProvider, startIdentityProvider, startRouter, wakeBody, wakeToken } from './harness.ts';

const [pglite] = testEngines();

describe('POST /internal/wake', () => {
  let idp: IdentityProvider;
  let model: ScriptedModel;
  let router: Awaited<ReturnType<typeof startRouter>>;

  before(async () => {
    idp = await startIdentityProvider();
    model = await startScriptedModel(railScript({ chat: () => ({ reply: 'Noted.', task: null, remember: [] }) }));
    router = await startRouter(pglite!, idp, { env: { PLATFORM_GATEWAY_URL: model.url } });
  });
  after(async () => {
    await router?.dispose();
    await model?.close();
    await idp?.close();
  });

  const wake = (body: unknown, headers: Record<string, string> = {}, bearer: string | null = wakeToken) =>
    httpCall(router.internalUrl, 'POST', '/internal/wake', { bearer, headers, body });

  test('wakes the stopped environment and answers 2xx only once the daemon took the wake; a repeat is the daemon’s duplicate', async () => {
    const sub = randomUUID();
    await router.admin('POST', '/admin/users', { idp_user_id: sub });
    const body = wakeBody(sub);
    const key = `${body.alarm_id}:${body.scheduled_for}`;
    const first = await wake(body, { 'idempotency-key': key });
    assert.equal(first.status, 202, first.text);
    assert.equal(first.json.data.accepted, true);
    const again = await wake(body, { 'idempotency-key': key });
    assert.deepEqual([again.status, again.json.data.duplicate], [200, true]);
    const token = await idp.token({ sub });
    await eventually(async () => (await router.call('GET', '/conversations/work', token)).json?.data?.entries?.length === 2, 'the wake’s turn', 20_000);
    assert.equal((await router.call('GET', '/conversations/work', token)).json.data.entries[0].text, 'Alarm: Stand-up in five minutes');
  });

  test('a daemon at work on a wake’s turn is not idle: the reaper leaves it running until the turn is over', async (t) => {
    const { promise: answer, resolve: answerNow } = Promise.withResolvers<Record<string, unknown>>();
    // Also when an assertion fails: a turn held for ever would keep the daemon, and the router's stop, waiting.
    t.after(() => answerNow({ reply: 'Noted.', task: null, remember: [] }));
    model.setScript(railScript({ chat: () => answer }));
    const sub = randomUUID();
    await router.admin('POST', '/admin/users', { idp_user_id: sub });
    const asked = model.received.length;
    const body = wakeBody(sub);
    assert.equal((await wake(body, { 'idempotency-key': `${body.alarm_id}:${body.scheduled_for}` })).status, 202);
    await model.waitFor(asked + 1);
    const longAfter = () => Date.now() + 16 * 60_000;
    // Nobody has asked for this environment since the wake was handed over, but its daemon is running the turn.
    // (Other tests' daemons in this router are idle and may be stopped by the same round.)
    assert.ok(!(await router.router.reaper.reap(longAfter())).includes(sub), 'a working daemon is not stopped');
    assert.ok(router.router.deps.provider.running().includes(sub));
    answerNow({ reply: 'Noted.', task: null, remember: [] });
    await pollUntil(async () => (await router.router.reaper.reap(longAfter())).includes(sub), 'the daemon stopped once its turn is over');
    model.setScript(railScript({ chat: () => ({ reply: 'Noted.', task: null, remember: [] }) }));
  });

  test('refusals: bearer, missing key, unknown user (404), suspended (451), a malformed body (400)', async () => {
    const sub = randomUUID();
    assert.equal((await wake(wakeBody(sub), { 'idempotency-key': 'k' }, 'wrong')).status, 401);
    assert.equal((await wake(wakeBody(sub), { 'idempotency-key': 'k' }, null)).status, 401);
    assert.equal((await wake(wakeBody(sub))).status, 400);
    assert.equal((await wake(wakeBody(sub), { 'idempotency-key': 'k' })).status, 404);
    await router.admin('POST', '/admin/users', { idp_user_id: sub });
    await router.admin('POST', `/admin/users/${sub}/suspend`);
    assert.equal((await wake(wakeBody(sub), { 'idempotency-key': 'k' })).status, 451);
    assert.equal((await wake({ ...wakeBody(sub), extra: true }, { 'idempotency-key': 'k' })).status, 400);
    const otherUsers = await wake({ ...wakeBody(sub), did: `did:platform:${randomUUID()}:0123456789abcdef` }, { 'idempotency-key': 'k' });
    assert.equal(otherUsers.status, 400, 'a DID of another user than user_id');
    assert.match(otherUsers.json.error.message, /did must be a DID of user_id/);
  });
});

describe('a scheduler alarm end to end: scheduler, router and daemon as real processes', () => {
  test('the alarm fires, the router wakes the user’s daemon and hands it the wake, once', async () => {
    const idp = await startIdentityProvider();
    const model = await startScriptedModel(railScript({ chat: () => ({ reply: 'Watering now.', task: null, remember: [] }) }));
    const dataDir = mkdtempSync(join(tmpdir(), 'router-e2e-'));
    const processes: ServiceProcess[] = [];
    try {
      const internalPort = String(await freePort());
      const scheduler = await startServiceProcess('scheduler', {
        SCHEDULER_TOKEN: 'sched-token',
        SCHEDULER_WAKE_URL: `http://127.0.0.1:${internalPort}/internal/wake`,
        SCHEDULER_WAKE_TOKEN: wakeToken,
      });
      processes.push(scheduler);
      const routerProcess = await startServiceProcess(
        'router',
        {
          ROUTER_INTERNAL_ADDR: `127.0.0.1:${internalPort}`,
          IDP_URL: idp.url,
          ROUTER_IDP_AUDIENCE: audience,
          ROUTER_ADMIN_TOKEN: adminToken,
          ROUTER_WAKE_TOKEN: wakeToken,
          PLATFORM_GATEWAY_URL: model.url,
          PLATFORM_SCHEDULER_URL: scheduler.url,
          SCHEDULER_TOKEN: 'sched-token',
        },
        { dataDir, readyLine: /router listening/ },
      );
      processes.push(routerProcess);
      const internal = `http://127.0.0.1:${internalPort}`;
      const sub = randomUUID();
      assert.equal((await httpCall(internal, 'POST', '/admin/users', { bearer: adminToken, body: { idp_user_id: sub } })).status, 201);
      const token = await idp.token({ sub });
      const me = await httpCall(routerProcess.url, 'GET', '/me', { bearer: token });
      assert.equal(me.status, 200, me.text);
      // Put the environment to sleep, so the alarm has to wake it.
      await httpCall(internal, 'POST', `/admin/users/${sub}/suspend`, { bearer: adminToken });
      await httpCall(internal, 'POST', `/admin/users/${sub}/restore`, { bearer: adminToken });
      // The agent's own key, from its volume, authenticates it to the scheduler (as its daemon would).
      const seed = readFileSync(join(dataDir, 'volumes', sub, 'data', 'agent.key'), 'utf8').trim();
      const key = agentKeyFromSeed(seed, sub);
      assert.equal(key.did, me.json.data.did);
      const scheduling = new SchedulerClient({ baseUrl: scheduler.url, transportToken: 'sched-token', key });
      const alarm = await scheduling.createAlarm({
        kind: 'once',
        fire_at: new Date(Date.now() - 1000).toISOString(),
        wake_message: 'Water the plants',
        conversation_id: 'garden',
      });
      await eventually(async () => (await scheduling.getAlarm(alarm.id)).status === 'fired', 'the alarm fired and was delivered', 100_000);
      const transcript = await httpCall(routerProcess.url, 'GET', '/conversations/garden', { bearer: token });
      assert.equal(transcript.status, 200, transcript.text);
      await eventually(
        async () => (await httpCall(routerProcess.url, 'GET', '/conversations/garden', { bearer: token })).json.data.entries.length === 2,
        'the turn',
        50_000,
      );
      const entries = (await httpCall(routerProcess.url, 'GET', '/conversations/garden', { bearer: token })).json.data.entries;
      assert.deepEqual(
        entries.map((entry: { role: string; text: string }) => [entry.role, entry.text]),
        [
          ['notice', 'Alarm: Water the plants'],
          ['assistant', 'Watering now.'],
        ],
      );
      const health = await httpCall(internal, 'GET', '/healthz', {});
      assert.ok(health.json.data.cold_starts.count >= 2, 'woken by the request, then by the alarm');
    } finally {
      for (const service of processes.reverse()) await service.stop();
      await model.close();
      await idp.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
