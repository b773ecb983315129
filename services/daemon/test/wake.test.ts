import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { wakeKeyMessage } from '@platform/kit/auth/wake-key-message';
import { freePort } from '@platform/kit/free-port';
import { eventually } from '@platform/testkit/eventually';
import { ManualClock } from '@platform/testkit/manual-clock';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { WakeKeys } from '../src/wake/wake-keys.ts';
import { compiled, daemonToken, railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon, toolStep, userId } from './harness.ts';

const wake = (overrides: Record<string, unknown> = {}) => ({
  user_id: userId,
  alarm_id: '0193a000-0000-7000-8000-000000000001',
  label: 'stand-up',
  wake_message: 'Time for the stand-up notes',
  conversation_id: 'work',
  payload: { note: 1 },
  scheduled_for: '2026-06-01T09:30:00.000Z',
  fired_at: '2026-06-01T09:30:00.120Z',
  attempt: 1,
  ...overrides,
});

describe('wakes', () => {
  let stack: Stack;
  let daemon: TestDaemon;
  const alarmChats = () =>
    stack.model.received.filter((request) => request.schemaName === 'chat_turn' && request.user.startsWith('[An alarm you set went off]'));

  before(async () => {
    stack = await startStack({
      gateway: false,
      services: ['scheduler'],
      script: railScript({ chat: () => ({ reply: 'Stand-up notes coming up.', task: null, remember: [] }) }),
    });
    daemon = await startDaemon(stack.env);
  });
  after(async () => {
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('a wake becomes a turn in its conversation; a repeat of its Idempotency-Key is acknowledged and dropped', async () => {
    const key = 'alarm-1:2026-06-01T09:30:00.000Z';
    const first = await daemon.call('POST', '/wake', { body: wake(), headers: { 'idempotency-key': key } });
    assert.equal(first.status, 202);
    assert.deepEqual(first.json.data, { accepted: true, duplicate: false, conversation_id: 'work' });
    const repeats = await Promise.all([1, 2, 3].map(() => daemon.call('POST', '/wake', { body: wake(), headers: { 'idempotency-key': key } })));
    for (const repeat of repeats) assert.deepEqual([repeat.status, repeat.json.data.duplicate], [200, true]);
    await daemon.daemon.wakes.settled();
    assert.equal(alarmChats().length, 1, 'one turn for one wake');
    assert.match(alarmChats()[0]?.user ?? '', /Time for the stand-up notes/);
    const transcript = await daemon.ok('GET', '/conversations/work');
    assert.deepEqual(
      transcript.entries.map((entry: { role: string; text: string }) => [entry.role, entry.text]),
      [
        ['notice', 'Alarm: Time for the stand-up notes'],
        ['assistant', 'Stand-up notes coming up.'],
      ],
    );
  });

  test('/healthz says working while a wake’s turn runs (the router leaves a working daemon running), and not after', async () => {
    const { promise: answer, resolve: answerNow } = Promise.withResolvers<Record<string, unknown>>();
    stack.model.setScript(railScript({ chat: () => answer }));
    const health = async () => (await daemon.call('GET', '/healthz')).json.data;
    assert.deepEqual([(await health()).working, (await health()).busy], [false, false]);
    const asked = stack.model.received.length;
    try {
      const accepted = await daemon.call('POST', '/wake', { body: wake(), headers: { 'idempotency-key': 'working-1' } });
      assert.equal(accepted.status, 202);
      await stack.model.waitFor(asked + 1);
      assert.deepEqual([(await health()).working, (await health()).busy], [true, false], 'no intent walks, but the wake’s turn does');
    } finally {
      // Also when an assertion failed: a turn held for ever would hang the next tests and the daemon's stop.
      answerNow({ reply: 'Done.', task: null, remember: [] });
    }
    await daemon.daemon.wakes.settled();
    assert.equal((await health()).working, false);
  });

  test('the key falls back to <alarm_id>:<scheduled_for>; a wake for another user is 403; none at all is 400', async () => {
    const implicit = wake({ alarm_id: '0193a000-0000-7000-8000-000000000002' });
    assert.equal((await daemon.call('POST', '/wake', { body: implicit })).status, 202);
    assert.equal((await daemon.call('POST', '/wake', { body: implicit })).json.data.duplicate, true);
    const foreign = await daemon.call('POST', '/wake', { body: wake({ user_id: 'someone-else' }), headers: { 'idempotency-key': 'k' } });
    assert.deepEqual([foreign.status, foreign.json.error.code], [403, 'forbidden']);
    // The DID that set the alarm must be this agent's: another key of the same user is refused too.
    const own = (await daemon.call('GET', '/me')).json.data.did as string;
    const otherKey = await daemon.call('POST', '/wake', {
      body: wake({ did: `did:platform:${userId}:${'f'.repeat(16)}` }),
      headers: { 'idempotency-key': 'kd' },
    });
    assert.deepEqual([otherKey.status, otherKey.json.error.code], [403, 'forbidden']);
    const mine = wake({ did: own.toUpperCase().replace('DID:PLATFORM:', 'did:platform:'), alarm_id: '0193a000-0000-7000-8000-000000000003' });
    assert.equal((await daemon.call('POST', '/wake', { body: mine })).status, 202, 'its own DID, in any spelling');
    const keyless = await daemon.call('POST', '/wake', { body: { wake_message: 'hi' } });
    assert.deepEqual([keyless.status, keyless.json.error.code], [400, 'invalid_request']);
    assert.match(keyless.json.error.message, /Idempotency-Key is required/);
    const long = await daemon.call('POST', '/wake', { body: { wake_message: 'hi' }, headers: { 'idempotency-key': 'k'.repeat(401) } });
    assert.equal(long.status, 400);
    assert.equal((await daemon.call('POST', '/wake', { body: { wake_message: 'hi' }, headers: { 'idempotency-key': 'k'.repeat(400) } })).status, 202);
    const stray = await daemon.call('POST', '/wake', { body: { wake_message: 'hi', extra: 1 }, headers: { 'idempotency-key': 'x' } });
    assert.equal(stray.status, 400);
    await daemon.daemon.wakes.settled();
  });

  test('a key its user linked wakes it too (the CLI’s own key, platform agent use); a check takes nothing; unlinked, it is refused again', async () => {
    const me = (await daemon.call('GET', '/me')).json.data as { did: string };
    const key = generateAgentKey(userId);
    const link = (body: Record<string, unknown>, did = key.did) => daemon.call('PUT', `/wake-keys/${encodeURIComponent(did)}`, { body });
    const signed = { public_key: key.publicKeyHex, signature: key.sign(wakeKeyMessage(me.did, key.did)) };
    const byKey = (alarm: string, extra: Record<string, unknown> = {}) =>
      daemon.call('POST', '/wake', { body: wake({ did: key.did, alarm_id: alarm, ...extra }) });
    const refused = await byKey('0193a000-0000-7000-8000-0000000000a1');
    assert.deepEqual([refused.status, refused.json.error.code], [403, 'forbidden']);
    assert.match(refused.json.error.message, /platform agent use/);
    assert.deepEqual([(await byKey('0193a000-0000-7000-8000-0000000000a2', { check: true })).status], [403], 'a check is refused alike');

    // Refusals: a bad signature, one made for another agent, another user's DID, the agent's own, a key not the DID's.
    const other = generateAgentKey(userId);
    for (const [body, did, status] of [
      [{ ...signed, signature: other.sign(wakeKeyMessage(me.did, key.did)) }, key.did, 401],
      [{ ...signed, signature: key.sign(wakeKeyMessage(`did:platform:${userId}:${'0'.repeat(16)}`, key.did)) }, key.did, 401],
      [signed, generateAgentKey('someone-else').did, 403],
      [signed, me.did, 409],
      [{ ...signed, public_key: other.publicKeyHex }, key.did, 400],
    ] as const) {
      const answer = await link(body, did);
      assert.equal(answer.status, status, JSON.stringify(answer.json));
    }
    assert.deepEqual((await daemon.call('GET', '/wake-keys')).json.data, { did: me.did, keys: [] }, 'nothing linked by a refusal');

    const linked = await link(signed);
    assert.equal(linked.status, 200, JSON.stringify(linked.json));
    assert.deepEqual([linked.json.data.created, linked.json.data.key.did], [true, key.did]);
    assert.equal((await link(signed)).json.data.created, false, 'linking again changes nothing');
    const asked = alarmChats().length;
    const check = await byKey('0193a000-0000-7000-8000-0000000000a3', { check: true });
    assert.deepEqual([check.status, check.json.data.accepted], [200, false], 'a check: it would be taken, nothing is');
    const accepted = await byKey('0193a000-0000-7000-8000-0000000000a4');
    assert.equal(accepted.status, 202, JSON.stringify(accepted.json));
    await daemon.daemon.wakes.settled();
    assert.equal(alarmChats().length, asked + 1, 'the linked key’s wake became a turn; the check did not');

    // Kept on disk for the next start; unlinked, its wakes are refused again.
    const reread = new WakeKeys(daemon.dataDir, new ManualClock(new Date()));
    await reread.init();
    assert.deepEqual(
      reread.list().map((entry) => entry.did),
      [key.did],
    );
    const unlinked = await daemon.call('DELETE', `/wake-keys/${encodeURIComponent(key.did)}`);
    assert.deepEqual(unlinked.json.data, { did: key.did, removed: true });
    assert.equal((await byKey('0193a000-0000-7000-8000-0000000000a5')).status, 403);
  });

  test('end to end: the agent sets an alarm through the real scheduler, which wakes it at /wake, once', async () => {
    // The router delivers wakes in production; here the scheduler calls the daemon's /wake directly with its bearer.
    const port = await freePort();
    const agent = await startDaemon({ ...stack.env, PLATFORM_SCHEDULER_URL: `http://127.0.0.1:${port}` });
    let scheduler: ServiceProcess | undefined;
    try {
      scheduler = await startServiceProcess('scheduler', {
        PORT: String(port),
        SCHEDULER_TOKEN: stack.env.SCHEDULER_TOKEN as string,
        SCHEDULER_WAKE_URL: `${agent.url}/wake`,
        SCHEDULER_WAKE_TOKEN: daemonToken,
      });
      const past = new Date(Date.now() - 1000).toISOString();
      stack.model.setScript(
        railScript({
          compile: compiled('remind me'),
          plans: [{ steps: [toolStep('alarm', 'alarms.set', { wake_message: 'Water the plants', fire_at: past, label: 'plants' })] }],
          chat: () => ({ reply: 'Reminder: water the plants.', task: null, remember: [] }),
        }),
      );
      const { intent_id: id } = await agent.ok('POST', '/messages/async', { prose: 'remind me to water the plants' });
      await eventually(() => (agent.daemon.book.state(id)?.gates ?? []).length > 0, 'setting an alarm asks first');
      await agent.ok('POST', `/intents/${id}/gates/alarm-approval/answer`, { approved: true });
      const done = await agent.daemon.runner.waitForEnd(id);
      assert.equal(done?.status, 'completed');
      const alarm = done?.steps.find((step) => step.id === 'alarm')?.result as { id: string };
      assert.match(alarm.id, /^[0-9a-f-]{36}$/);
      const transcript = async () => (await agent.call('GET', '/conversations/default')).json?.data?.entries ?? [];
      await eventually(async () => (await transcript()).length >= 2, 'the wake turn', 100_000);
      assert.deepEqual(
        (await transcript()).map((entry: { role: string; text: string }) => [entry.role, entry.text]),
        [
          ['notice', 'Alarm: Water the plants'],
          ['assistant', 'Reminder: water the plants.'],
        ],
      );
      await agent.daemon.wakes.settled();
    } finally {
      await scheduler?.stop();
      await agent.stop();
      removeFolder(agent.dataDir);
    }
  });
});
