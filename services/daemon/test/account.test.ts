import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentKeyFromSeed, generateAgentKey } from '@platform/client/agent-key';
import { SettlementClient } from '@platform/client/settlement-client';
import { railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon, userId } from './harness.ts';

/*
 * The console's routes on the daemon: the agent's settlement account, its alarms and its model spend, each asked of
 * the real service as the agent (its key, its bearers), so the owner is always the daemon's own user.
 */
describe('the console’s account, alarm, spend and memory routes', () => {
  let stack: Stack;
  let daemon: TestDaemon;
  let bare: TestDaemon;

  before(async () => {
    stack = await startStack({
      services: ['scheduler', 'settlement', 'memory'],
      script: railScript({
        chat: (request) => ({ reply: 'Hi.', task: null, remember: request.user.includes('peanuts') ? ['Maria is allergic to peanuts.'] : [] }),
      }),
    });
    daemon = await startDaemon(stack.env);
    // The same daemon without the services: the routes name the missing setting.
    const { PLATFORM_SCHEDULER_URL: _s, PLATFORM_SETTLEMENT_URL: _l, PLATFORM_GATEWAY_URL: _g, PLATFORM_MEMORY_URL: _m, ...without } = stack.env;
    bare = await startDaemon(without);
  });

  after(async () => {
    for (const agent of [daemon, bare]) {
      await agent?.stop();
      if (agent) removeFolder(agent.dataDir);
    }
    await stack?.close();
  });

  test('GET /account is this agent’s settlement account, zeros before its first credit', async () => {
    const account = await daemon.ok('GET', '/account');
    assert.deepEqual(
      { did: account.did, balance: account.balance, held: account.held },
      { did: daemon.daemon.identity.did, balance: '0.000000', held: '0.000000' },
    );
  });

  test('GET /holds is this agent’s open holds at settlement, both ways, newest first; a bad page is a 400', async () => {
    const ledgerUrl = stack.env.PLATFORM_SETTLEMENT_URL as string;
    const transportToken = stack.env.LEDGER_TOKEN as string;
    // The agent's own key (the daemon's seed) places a hold as payer; another agent places one for it.
    const agentKey = agentKeyFromSeed('ab'.repeat(32), userId);
    const otherKey = generateAgentKey();
    assert.equal(agentKey.did, daemon.daemon.identity.did);
    const agent = new SettlementClient({ baseUrl: ledgerUrl, transportToken, key: agentKey });
    const other = new SettlementClient({ baseUrl: ledgerUrl, transportToken, key: otherKey });
    await agent.faucet('5');
    await other.faucet('5');
    const placed = async (payer: SettlementClient, to: string, amount: string) =>
      (await payer.session.request<{ hold: { id: string } }>('POST', '/v1/hold', { to, amount, expires_in_seconds: 600 })).hold.id;
    const outgoing = await placed(agent, otherKey.did, '1.5');
    const incoming = await placed(other, daemon.daemon.identity.did, '0.25');
    const listed = await daemon.ok('GET', '/holds');
    assert.deepEqual(
      listed.holds.map((hold: { id: string; payer: string; payee: string; amount: string }) => [hold.id, hold.payer, hold.payee, hold.amount]),
      [
        [incoming, otherKey.did, daemon.daemon.identity.did, '0.250000'],
        [outgoing, daemon.daemon.identity.did, otherKey.did, '1.500000'],
      ],
    );
    assert.match(listed.holds[0].expires_at, /^\d{4}-\d{2}-\d{2}T/);
    assert.equal((await daemon.ok('GET', '/account')).held, '1.500000');
    const page = await daemon.ok('GET', '/holds?limit=1');
    assert.deepEqual([page.holds.length, typeof page.next_before], [1, 'number']);
    for (const query of ['?limit=0', '?limit=201', '?before=0']) assert.equal((await daemon.call('GET', `/holds${query}`)).status, 400, query);
  });

  test('alarms: create (201), list, cancel; another agent’s or an unknown alarm is 404', async () => {
    const created = await daemon.call('POST', '/alarms', { body: { wake_message: 'water the plants', delay_seconds: 600, idempotency_key: 'console-1' } });
    assert.equal(created.status, 201);
    assert.equal(created.json.data.status, 'active');
    const again = await daemon.ok('POST', '/alarms', { wake_message: 'water the plants', delay_seconds: 600, idempotency_key: 'console-1' });
    assert.equal(again.id, created.json.data.id, 'the same key gives the same alarm');
    const cron = await daemon.ok('POST', '/alarms', { wake_message: 'weekly review', cron_expr: '0 9 * * 1', timezone: 'Europe/Paris' });
    const listed = await daemon.ok('GET', '/alarms?limit=10');
    assert.deepEqual(listed.alarms.map((alarm: { id: string }) => alarm.id).sort(), [created.json.data.id, cron.id].sort());
    const cancelled = await daemon.ok('DELETE', `/alarms/${created.json.data.id}`);
    assert.equal(cancelled.status, 'cancelled');
    // Another agent (another daemon, another DID) cannot see or cancel it.
    const other = await startDaemon(stack.env, { seed: 'cd'.repeat(32) });
    try {
      const foreign = await other.call('DELETE', `/alarms/${cron.id}`);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.json.error.code, 'not_found');
      assert.deepEqual((await other.ok('GET', '/alarms')).alarms, []);
    } finally {
      await other.stop();
      removeFolder(other.dataDir);
    }
    assert.equal((await daemon.call('DELETE', '/alarms/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')).status, 404);
  });

  test('a bad alarm is a 400 naming the problem, and nothing is created', async () => {
    const before = (await daemon.ok('GET', '/alarms')).alarms.length;
    for (const [body, pattern] of [
      [{ wake_message: 'x' }, /exactly one of delay_seconds, fire_at and cron_expr/],
      [{ wake_message: 'x', delay_seconds: 60, cron_expr: '* * * * *' }, /exactly one/],
      [{ wake_message: 'x', delay_seconds: 60, timezone: 'UTC' }, /timezone goes with cron_expr/],
      [{ wake_message: '', delay_seconds: 60 }, /wake_message/],
      [{ wake_message: 'x'.repeat(16_385), delay_seconds: 60 }, /wake_message/],
      [{ wake_message: 'x', delay_seconds: 0 }, /delay_seconds/],
      [{ wake_message: 'x', delay_seconds: 60, owner: 'someone-else' }, /additional properties/],
      [{ wake_message: 'x', cron_expr: 'not a cron' }, /cron/],
    ] as const) {
      const refused = await daemon.call('POST', '/alarms', { body });
      assert.equal(refused.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(refused.json.error.code, 'invalid_request');
      assert.match(refused.json.error.message, pattern);
    }
    assert.equal((await daemon.call('POST', '/alarms', { body: { wake_message: 'x'.repeat(16_384), delay_seconds: 60 } })).status, 201, 'at the limit');
    assert.equal((await daemon.ok('GET', '/alarms')).alarms.length, before + 1);
    assert.equal((await daemon.call('GET', '/alarms/x')).status, 404);
  });

  test('GET /spend is this agent’s model spend per day and per intent at the gateway', async () => {
    await daemon.ok('POST', '/chat', { message: 'hello' });
    const usage = await daemon.ok('GET', '/spend');
    assert.equal(usage.actor, daemon.daemon.identity.did);
    assert.equal(usage.days.length, 1);
    assert.ok(usage.days[0].calls >= 1);
    assert.match(usage.days[0].spent_credit, /^\d+\.\d{12}$/);
    assert.ok(Array.isArray(usage.intents));
    const refused = await daemon.call('GET', '/spend?from=2026-02-30');
    assert.equal(refused.status, 400);
    // The gateway's own route wants the actor it reports on.
    const gateway = stack.services.gateway?.url as string;
    const anonymous = await fetch(`${gateway}/v1/usage`, { headers: { authorization: `Bearer ${stack.env.PLATFORM_GATEWAY_TOKEN}` } });
    assert.equal(anonymous.status, 400);
    assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'invalid_actor');
    assert.equal((await fetch(`${gateway}/v1/usage`, { headers: { 'x-platform-actor-did': daemon.daemon.identity.did } })).status, 401);
  });

  test('memories: what the agent remembered is found, forgotten, and no longer found', async () => {
    await daemon.ok('POST', '/chat', { message: 'remember that Maria cannot eat peanuts' });
    const found = await daemon.ok('GET', '/memories?query=peanuts');
    const memory = found.memories.find((entry: { content: string }) => entry.content === 'Maria is allergic to peanuts.');
    assert.ok(memory, JSON.stringify(found));
    const forgotten = await daemon.ok('DELETE', `/memories/${memory.id}`);
    assert.equal(forgotten.status, 'forgotten');
    const after = await daemon.ok('GET', '/memories?query=peanuts');
    assert.equal(
      after.memories.some((entry: { id: string }) => entry.id === memory.id),
      false,
    );
    assert.equal((await daemon.call('DELETE', '/memories/not-a-uuid')).status, 400);
    const unknown = await daemon.call('DELETE', '/memories/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
    assert.equal(unknown.status, 404);
    assert.equal((await daemon.call('GET', `/memories?query=${'x'.repeat(1001)}`)).status, 400);
  });

  test('without the bearer nothing answers; without the services each route names its setting', async () => {
    for (const query of ['/invocations?limit=0', '/invocations?limit=101', '/invocations?cursor=x', '/invocations/not-a-uuid/receipt'])
      assert.equal((await bare.call('GET', query)).status, 400, query);
    for (const path of ['/account', '/holds', '/alarms', '/spend', '/memories', '/invocations'])
      assert.equal((await daemon.call('GET', path, { bearer: null })).status, 401, path);
    for (const [path, setting] of [
      ['/account', 'PLATFORM_SETTLEMENT_URL'],
      ['/holds', 'PLATFORM_SETTLEMENT_URL'],
      ['/alarms', 'PLATFORM_SCHEDULER_URL'],
      ['/spend', 'PLATFORM_GATEWAY_URL'],
      ['/memories', 'PLATFORM_MEMORY_URL'],
      ['/invocations', 'PLATFORM_MARKETPLACE_URL'],
      ['/invocations/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/receipt', 'PLATFORM_MARKETPLACE_URL'],
    ] as const) {
      const answer = await bare.call('GET', path);
      assert.equal(answer.status, 503, path);
      assert.match(answer.json.error.message, new RegExp(setting));
    }
  });
});
