import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { compiled, modelStep, railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon } from './harness.ts';

const plan = { steps: [modelStep('think', 'Think')] };

/** Moves the daemon's clock a quarter second per turn of the event loop until `condition` holds. */
async function advanceUntil(daemon: TestDaemon, condition: () => boolean, what: string): Promise<void> {
  await eventually(() => {
    if (condition()) return true;
    daemon.clock.advance(250);
    return false;
  }, what);
}

describe('slow, failing and wrong model answers', () => {
  let stack: Stack;
  let daemon: TestDaemon;

  before(async () => {
    stack = await startStack({ gateway: false });
    daemon = await startDaemon({ ...stack.env, DAEMON_MODEL_RETRIES: '1', DAEMON_MODEL_TIMEOUT_MS: '30000' });
  });
  after(async () => {
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  async function run(prose: string) {
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose });
    return id as string;
  }

  test('a model that does not answer times out on the injected clock, is tried once more, then fails the intent', async () => {
    stack.model.setScript((request) => (request.schemaName === 'compiled_intent' ? { hang: true } : 'x'));
    const asked = stack.model.received.length;
    const id = await run('anything');
    await stack.model.waitFor(asked + 1);
    daemon.clock.advance(30_000);
    // The retry waits out its backoff on the same clock, then asks again.
    await advanceUntil(daemon, () => stack.model.received.length === asked + 2, 'the second attempt');
    daemon.clock.advance(30_000);
    const status = await daemon.daemon.runner.waitForEnd(id);
    assert.equal(status?.status, 'failed');
    assert.deepEqual([status?.result?.reason], ['model_error']);
    assert.match(status?.result?.error ?? '', /the model did not answer within 30000 ms/);
  });

  test('a failing answer (503) is retried after the backoff and the intent goes on', async () => {
    let failures = 1;
    const base = railScript({ plans: [plan], answer: 'Recovered.' });
    stack.model.setScript((request) => {
      if (request.schemaName === 'compiled_intent' && failures-- > 0) return { status: 503, message: 'overloaded' };
      return base(request);
    });
    const asked = stack.model.received.length;
    const id = await run('retry me');
    await advanceUntil(daemon, () => stack.model.received.length >= asked + 2, 'the retry after the backoff');
    const status = await daemon.daemon.runner.waitForEnd(id);
    assert.deepEqual([status?.status, status?.result?.answer], ['completed', 'Recovered.']);
  });

  test('a refusal no retry can fix (400) fails at once with the model’s message', async () => {
    stack.model.setScript(() => ({ status: 400, code: 'context_length_exceeded', message: 'prompt too long' }));
    const status = await daemon.daemon.runner.waitForEnd(await run('too long'));
    assert.equal(status?.status, 'failed');
    assert.match(status?.result?.error ?? '', /the model call failed \(400 context_length_exceeded\): prompt too long/);
  });

  test('structured output is never trusted: a bad answer is shown its problems and asked again; twice bad fails', async () => {
    let compiles = 0;
    const base = railScript({ plans: [plan], answer: 'Fine.' });
    stack.model.setScript((request) => {
      if (request.schemaName !== 'compiled_intent') return base(request);
      compiles++;
      return compiles === 1 ? '```json\n{"outcome":"act","goal":"x"}\n```' : compiled('fixed');
    });
    const fixed = await daemon.daemon.runner.waitForEnd(await run('fix yourself'));
    assert.equal(fixed?.status, 'completed');
    const correction = stack.model.received.filter((request) => request.schemaName === 'compiled_intent').at(-1);
    assert.match(correction?.user ?? '', /That answer cannot be used: \$ is missing "constraints"/);

    stack.model.setScript((request) => (request.schemaName === 'compiled_intent' ? 'I think you want to pay Bob.' : base(request)));
    const broken = await daemon.daemon.runner.waitForEnd(await run('hopeless'));
    assert.equal(broken?.status, 'failed');
    assert.match(broken?.result?.error ?? '', /the compiler model gave no usable compiled_intent twice: the answer is not JSON/);

    stack.model.setScript((request) =>
      request.schemaName === 'compiled_intent'
        ? { outcome: 'clarify', goal: '', constraints: [], success_criteria: [], confidence: 2, question: null }
        : base(request),
    );
    const invalid = await daemon.daemon.runner.waitForEnd(await run('out of range'));
    assert.match(invalid?.result?.error ?? '', /confidence must be <= 1/);
  });

  test('cancelling an intent abandons its model call at once', async () => {
    stack.model.setScript(() => ({ hang: true }));
    const asked = stack.model.received.length;
    const id = await run('hang forever');
    await stack.model.waitFor(asked + 1);
    const cancelled = await daemon.ok('POST', `/intents/${id}/cancel`, { reason: 'too slow' });
    assert.deepEqual([cancelled.status, cancelled.result.reason], ['cancelled', 'too slow']);
  });
});
