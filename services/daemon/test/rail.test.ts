import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentKeyFromSeed, generateAgentKey } from '@platform/client/agent-key';
import { SettlementClient } from '@platform/client/settlement-client';
import { verifyChain } from '@platform/kit/journal-envelope';
import { defaultModelIds } from '@platform/kit/model-labels';
import { eventually } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import {
  clarification,
  compiled,
  gateStep,
  modelStep,
  railScript,
  removeFolder,
  type Stack,
  startDaemon,
  startStack,
  type TestDaemon,
  toolStep,
  userId,
} from './harness.ts';

const seed = 'c3'.repeat(32);
const bob = generateAgentKey();

/** Waits (in memory, each turn of the event loop) until the intent has a pending gate; returns the gate's node id. */
async function pendingGate(daemon: TestDaemon, id: string): Promise<string> {
  await eventually(() => (daemon.daemon.book.state(id)?.gates ?? []).some((gate) => gate.status === 'pending'), `a pending gate on ${id}`);
  return daemon.daemon.book.state(id)?.gates.find((gate) => gate.status === 'pending')?.node_id as string;
}

async function ended(daemon: TestDaemon, id: string) {
  await daemon.daemon.runner.waitForEnd(id);
  return daemon.ok('GET', `/messages/async/${id}`);
}

const payPlan = (amount: string) => ({
  steps: [toolStep('look', 'memory.recall', { query: 'lunch with bob' }), toolStep('pay', 'payments.pay', { to: bob.did, amount }, ['look'])],
});

describe('the rail against the real gateway, memory server and settlement', () => {
  let stack: Stack;
  let daemon: TestDaemon;
  let ledger: SettlementClient;

  before(async () => {
    stack = await startStack({ services: ['memory', 'settlement'] });
    daemon = await startDaemon(stack.env, { seed });
    ledger = new SettlementClient({
      baseUrl: stack.services.settlement?.url as string,
      transportToken: stack.env.LEDGER_TOKEN,
      key: agentKeyFromSeed(seed, userId),
    });
    await ledger.faucet('100');
  });
  after(async () => {
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('a full intent: two tool calls, an approval gate the policy added, the answer, a verifiable journal, metering by intent and slot', async () => {
    stack.model.setScript(railScript({ compile: compiled('pay Bob for lunch'), plans: [payPlan('2.50')], answer: 'Paid Bob 2.50 for lunch.' }));
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'Pay Bob 2.50 for our lunch' });
    const node = await pendingGate(daemon, id);
    assert.equal(node, 'pay-approval');
    const gates = await daemon.ok('GET', `/intents/${id}/gates`);
    assert.equal(gates.pending.length, 1);
    assert.match(gates.pending[0].question, /moves money: pays 2\.50 to did:platform:/);
    assert.deepEqual(gates.pending[0].options, ['approve', 'deny']);
    // Nothing has moved while the gate waits.
    assert.equal((await ledger.balance()).balance, '100.000000');

    const first = await daemon.ok('POST', `/intents/${id}/gates/${node}/answer`, { approved: true, answer: 'approve' });
    assert.deepEqual([first.recorded, first.gate.status, first.gate.answered_by], [true, 'approved', 'user']);
    const again = await daemon.ok('POST', `/intents/${id}/gates/${node}/answer`, { approved: false, answer: 'deny' });
    assert.deepEqual([again.recorded, again.gate.status, again.gate.answer], [false, 'approved', 'approve'], 'the first decision stands');

    const status = await ended(daemon, id);
    assert.equal(status.status, 'completed');
    assert.equal(status.result.answer, 'Paid Bob 2.50 for lunch.');
    assert.equal((await ledger.balance()).balance, '97.500000', 'paid exactly once');
    const bobAccount = await httpCall(stack.services.settlement?.url as string, 'GET', `/v1/account/${bob.did}`);
    assert.equal(bobAccount.json.data.balance, '2.500000');

    const chain = await daemon.ok('GET', `/intents/${id}`);
    assert.deepEqual(
      chain.envelopes.map((envelope: { kind: string }) => envelope.kind),
      [
        'intent.created',
        'intent.compiled',
        'intent.planned',
        'step.started',
        'step.completed',
        'gate.invoked',
        'gate.answered',
        'step.started',
        'step.completed',
        'intent.attest',
      ],
    );
    const verdict = await verifyChain(chain.envelopes, chain.public_key, id);
    assert.equal(verdict.ok, true);
    const payStep = chain.state.steps.find((step: { id: string }) => step.id === 'pay');
    assert.equal(payStep.arguments.to, bob.did);
    assert.equal(payStep.result.receipt.amount, '2.500000');

    // The gateway metered every call under the daemon's DID, by intent and by slot.
    const compile = stack.model.received.find((request) => request.schemaName === 'compiled_intent');
    assert.equal(compile?.model, defaultModelIds.M1, 'the compiler model');
    assert.equal(stack.model.received.find((request) => request.schemaName === 'plan')?.model, defaultModelIds.M2, 'the planner is pinned to M2');
    const rollup = async (by: string) =>
      (
        await httpCall(stack.services.gateway?.url as string, 'GET', `/v1/admin/rollups?by=${by}&actor=${encodeURIComponent(daemon.daemon.identity.did)}`, {
          bearer: 'gw-admin',
        })
      ).json.data as { key: string; calls: number }[];
    // Bookings are written just behind the answers.
    await eventually(async () => (await rollup('intent')).find((row) => row.key === id)?.calls === 3, 'compile, plan and answer billed to the intent', 20_000);
    assert.deepEqual((await rollup('slot')).map((row) => row.key).sort(), ['compiler', 'executor', 'planner']);
  });

  test('a denied gate skips the payment and what depends on it; the intent completes saying so', async () => {
    stack.model.setScript(railScript({ compile: compiled('pay Bob'), plans: [payPlan('1.00')], answer: 'I did not pay Bob: you declined.' }));
    const before = (await ledger.balance()).balance;
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'Pay Bob 1' });
    const node = await pendingGate(daemon, id);
    await daemon.ok('POST', `/intents/${id}/gates/${node}/answer`, { approved: false, answer: 'deny' });
    const status = await ended(daemon, id);
    assert.equal(status.status, 'completed');
    assert.equal((await ledger.balance()).balance, before, 'no money moved');
    const state = (await daemon.ok('GET', `/intents/${id}`)).state;
    assert.deepEqual(
      state.steps.map((step: { id: string; status: string }) => [step.id, step.status]),
      [
        ['look', 'done'],
        ['pay-approval', 'denied'],
        ['pay', 'skipped'],
      ],
    );
    const answerPrompt = stack.model.received.at(-1)?.prompt ?? '';
    assert.match(answerPrompt, /skipped \("Approve: payments\.pay \(pay\)" was not approved\)/, 'the executor is told what was not done');
  });

  test('a vague request ends asking its clarification question', async () => {
    stack.model.setScript(railScript({ compile: clarification('Whom should I pay, and how much?') }));
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'pay them' });
    const status = await ended(daemon, id);
    assert.equal(status.status, 'failed');
    assert.equal(status.result.reason, 'clarification_needed');
    assert.equal(status.result.clarification, 'Whom should I pay, and how much?');
  });

  test('a low-confidence compile is asked again of the escalation model (M2), whose answer stands', async () => {
    let compiles = 0;
    const base = railScript({ plans: [{ steps: [modelStep('think', 'Say hello')] }] });
    stack.model.setScript((request) => {
      if (request.schemaName !== 'compiled_intent') return base(request);
      compiles++;
      return compiles === 1 ? compiled('maybe greet', 0.2) : compiled('greet the user', 0.95);
    });
    const from = stack.model.received.length;
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'hello?' });
    const status = await ended(daemon, id);
    assert.equal(status.status, 'completed');
    const compileModels = stack.model.received
      .slice(from)
      .filter((request) => request.schemaName === 'compiled_intent')
      .map((request) => request.model);
    assert.deepEqual(compileModels, [defaultModelIds.M1, defaultModelIds.M2]);
    const state = (await daemon.ok('GET', `/intents/${id}`)).state;
    assert.deepEqual([state.compiled.goal, state.compiled.escalated, state.compiled.model], ['greet the user', true, defaultModelIds.M2]);
  });

  test('a plan naming an unknown tool is planned once more with the problem; twice unknown fails naming it', async () => {
    const unknown = { steps: [toolStep('x', 'email.send', { to: 'bob' })] };
    stack.model.setScript(railScript({ plans: [unknown, { steps: [toolStep('r', 'memory.recall', { query: 'bob' })] }] }));
    const { intent_id: fixed } = await daemon.ok('POST', '/messages/async', { prose: 'email bob' });
    assert.equal((await ended(daemon, fixed)).status, 'completed');
    const replan = stack.model.received.filter((request) => request.schemaName === 'plan').at(-1);
    assert.match(replan?.prompt ?? '', /Your previous plan was refused: step 1 \("x"\) uses unknown tool "email\.send"/);
    const kinds = (await daemon.ok('GET', `/intents/${fixed}`)).envelopes.map((envelope: { kind: string }) => envelope.kind);
    assert.ok(kinds.includes('plan.rejected'));

    stack.model.setScript(railScript({ plans: [unknown] }));
    const { intent_id: broken } = await daemon.ok('POST', '/messages/async', { prose: 'email bob' });
    const status = await ended(daemon, broken);
    assert.equal(status.status, 'failed');
    assert.equal(status.result.reason, 'plan_invalid');
    assert.match(status.result.error, /unknown tool "email\.send" \(the tools are: payments\.pay, payments\.balance, memory\.remember/);
  });

  test('bad tool arguments are refused at plan time with the field named', async () => {
    const bad = { steps: [toolStep('pay', 'payments.pay', { to: bob.did, amount: 'ten dollars' })] };
    stack.model.setScript(railScript({ plans: [bad, bad] }));
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'pay bob ten dollars' });
    const status = await ended(daemon, id);
    assert.equal(status.result.reason, 'plan_invalid');
    assert.match(status.result.error, /\(payments\.pay\) arguments\.amount must match pattern/);
  });

  test('POST /messages runs synchronously and answers the outcome; a second while it walks is 409 busy', async () => {
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    const base = railScript({ plans: [{ steps: [modelStep('think', 'Summarise')] }], answer: 'Summary written.' });
    stack.model.setScript(async (request) => {
      if (request.schemaName === 'plan') await held;
      return base(request);
    });
    const first = daemon.call('POST', '/messages', { body: { prose: 'summarise my week' } });
    await eventually(() => daemon.daemon.runner.walking !== undefined, 'the first walk');
    const second = await daemon.call('POST', '/messages', { body: { prose: 'and another thing' } });
    assert.equal(second.status, 409);
    assert.deepEqual([second.json.error.code, second.json.error.retryable], ['busy', true]);
    assert.match(second.json.error.message, /^Busy: intent [0-9a-f]{64} is being walked/);
    const rejected = await daemon.call('POST', '/messages/async', { body: { prose: 'now', strategy: 'reject' } });
    assert.equal(rejected.status, 409);
    const queued = await daemon.call('POST', '/messages/async', { body: { prose: 'later' } });
    assert.equal(queued.status, 202);
    assert.equal(queued.json.data.queue_position, 0, 'enqueue is the default');
    release();
    const answered = await first;
    assert.equal(answered.status, 200);
    assert.deepEqual([answered.json.data.status, answered.json.data.result.answer], ['completed', 'Summary written.']);
    assert.equal((await ended(daemon, queued.json.data.intent_id)).status, 'completed', 'the queued one ran after');
  });

  test('cancel stops an intent at its gate; a queued one is cancelled before it starts; an ended one is 409', async () => {
    stack.model.setScript(railScript({ plans: [{ steps: [gateStep('ask', 'Go ahead?', ['yes', 'no']), modelStep('do', 'do it', ['ask'])] }] }));
    const { intent_id: walking } = await daemon.ok('POST', '/messages/async', { prose: 'do something careful' });
    await pendingGate(daemon, walking);
    const { intent_id: queued } = await daemon.ok('POST', '/messages/async', { prose: 'then this' });
    const cancelledQueued = await daemon.ok('POST', `/intents/${queued}/cancel`, { reason: 'changed my mind' });
    assert.equal(cancelledQueued.status, 'cancelled');
    const cancelled = await daemon.ok('POST', `/intents/${walking}/cancel`, {});
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.result.reason, 'cancelled by the user');
    const lateAnswer = await daemon.call('POST', `/intents/${walking}/gates/ask/answer`, { body: { approved: true } });
    assert.equal(lateAnswer.status, 200);
    assert.deepEqual([lateAnswer.json.data.recorded, lateAnswer.json.data.gate.status, lateAnswer.json.data.gate.answered_by], [false, 'denied', 'cancel']);
    const again = await daemon.call('POST', `/intents/${walking}/cancel`, { body: {} });
    assert.deepEqual([again.status, again.json.error.code], [409, 'conflict']);
    const kinds = (await daemon.ok('GET', `/intents/${walking}`)).envelopes.map((envelope: { kind: string }) => envelope.kind);
    assert.equal(kinds.at(-1), 'intent.cancel');
    assert.ok(!kinds.includes('step.started'), 'the step behind the gate never ran');
  });

  test('a gate not answered in time is denied by timeout on the injected clock', async () => {
    stack.model.setScript(railScript({ plans: [{ steps: [gateStep('ask', 'Shall I?', []), modelStep('do', 'do it', ['ask'])] }] }));
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'something' });
    await pendingGate(daemon, id);
    daemon.clock.advance(900_000);
    const status = await ended(daemon, id);
    assert.equal(status.status, 'completed');
    const gate = (await daemon.ok('GET', `/intents/${id}`)).state.gates[0];
    assert.deepEqual([gate.status, gate.answered_by], ['denied', 'timeout']);
  });
});
