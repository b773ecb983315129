import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { ManualClock } from '@platform/testkit/manual-clock';
import { clarification, gatedPlan, railScript, toolStep } from '@platform/testkit/rail-script';
import { type ModelScript, type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { DaemonClient } from '../src/daemon-client.ts';
import { type Approver, DelegationError, delegate, follow } from '../src/delegate.ts';
import { folderGateClaims } from '../src/gate-claims.ts';

const token = 'delegate-test-token';

/** The rail's stages, scripted: a plan with one gate before one model step, or what a test says. */
function script(options: { compile?: object; plan?: object; answer?: string; holdPlan?: Promise<void> } = {}): ModelScript {
  const stages = railScript({ compile: options.compile, plans: [options.plan ?? gatedPlan()], answer: options.answer ?? 'All done.' });
  return async (request) => {
    if (request.schemaName === 'plan') await options.holdPlan;
    return stages(request);
  };
}

const approveAll: Approver = async (gate) => ({ approved: true, answer: gate.options[0] ?? 'yes' });

/**
 * A fetch that logs and counts requests in flight and can cut, hold or stand in for the event stream (`onEvents`
 * answering a Response is the stream).
 */
function instrumentedFetch(hooks: { onEvents?: (attempt: number, headers: Headers) => Promise<void> | Response | 'fail' | undefined } = {}) {
  let inFlight = 0;
  let eventsAttempts = 0;
  const eventHeaders: Headers[] = [];
  const requests: string[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = String(input);
    requests.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`);
    if (url.includes('/events')) {
      const headers = new Headers(init?.headers);
      eventHeaders.push(headers);
      const hook = hooks.onEvents?.(++eventsAttempts, headers);
      if (hook === 'fail') throw new TypeError('fetch failed: the stream is unreachable');
      if (hook instanceof Response) return hook;
      await hook;
      return fetch(input, init);
    }
    inFlight++;
    try {
      return await fetch(input, init);
    } finally {
      inFlight--;
    }
  };
  return {
    fetch: wrapped,
    eventHeaders,
    requests,
    get inFlight() {
      return inFlight;
    },
  };
}

describe('the delegation client against a real daemon process', () => {
  let model: ScriptedModel;
  let daemon: ServiceProcess;
  let client: DaemonClient;

  before(async () => {
    model = await startScriptedModel(script());
    daemon = await startServiceProcess('daemon', { PLATFORM_GATEWAY_URL: model.url, PLATFORM_DAEMON_TOKEN: token, DAEMON_MODEL_RETRIES: '0' });
    client = new DaemonClient({ baseUrl: daemon.url, token });
  });
  after(async () => {
    await daemon?.stop();
    await model?.close();
  });

  test('completed: the answer; an empty answer is "Done"; the approver sees node id, question and options', async () => {
    const asked: unknown[] = [];
    const answer = await delegate(client, 'do the careful thing', {
      approver: async (gate) => {
        asked.push({ node: gate.nodeId, question: gate.question, options: gate.options });
        return { approved: true, answer: 'yes' };
      },
    });
    assert.equal(answer, 'All done.');
    assert.deepEqual(asked, [{ node: 'ask', question: 'Go ahead?', options: ['yes', 'no'] }]);
    model.setScript(script({ answer: '' }));
    assert.equal(await delegate(client, 'again', { approver: approveAll }), 'Done');
    model.setScript(script());
  });

  test('no approver denies every gate: the gated step is skipped', async () => {
    let id = '';
    await delegate(client, 'careful again', { onSubmitted: (intentId) => (id = intentId) });
    const intent = await client.intent(id);
    assert.deepEqual(
      intent.state.steps.map((step: { id: string; status: string }) => [step.id, step.status]),
      [
        ['ask', 'denied'],
        ['work', 'skipped'],
      ],
    );
  });

  test('failed: an error carrying the pipeline message', async () => {
    model.setScript(script({ plan: { steps: [toolStep('x', 'nothing.here', {})] } }));
    await assert.rejects(delegate(client, 'use a tool that does not exist'), (error: unknown) => {
      assert.ok(error instanceof DelegationError);
      assert.equal(error.kind, 'failed');
      assert.match(error.message, /no valid plan after 2 attempts: step 1 \("x"\) uses unknown tool "nothing\.here"/);
      return true;
    });
    model.setScript(script());
  });

  test('cancelled: an error saying the delegated task was cancelled', async () => {
    await assert.rejects(
      delegate(client, 'cancel me at the gate', {
        approver: async (gate) => {
          await client.cancel(gate.intentId);
          return { approved: true, answer: 'yes' };
        },
      }),
      (error: unknown) => error instanceof DelegationError && error.kind === 'cancelled' && error.message === 'the delegated task was cancelled',
    );
  });

  test('a clarification question: an error carrying the question', async () => {
    model.setScript(script({ compile: clarification('Which Bob?') }));
    await assert.rejects(
      delegate(client, 'pay Bob'),
      (error: unknown) => error instanceof DelegationError && error.kind === 'clarification' && error.question === 'Which Bob?',
    );
    model.setScript(script());
  });

  test('timeout: past the maximum wait on the injected clock, a timeout error (the intent goes on in the daemon)', async () => {
    const { promise: hold, resolve: release } = Promise.withResolvers<void>();
    model.setScript(script({ holdPlan: hold }));
    const clock = new ManualClock();
    let id = '';
    try {
      const outcome = delegate(client, 'think for a long time', { clock, maxWaitMs: 60_000, onSubmitted: (intentId) => (id = intentId) });
      await eventually(() => id !== '', 'submitted');
      // The daemon is held inside planning; on a busy machine it may still be drafting when the wait runs out.
      await eventually(async () => (await client.status(id)).status === 'planning', 'the intent is planning');
      clock.advance(60_000);
      await assert.rejects(outcome, (error: unknown) => error instanceof DelegationError && error.kind === 'timeout');
      assert.equal((await client.status(id)).status, 'planning', 'the intent goes on in the daemon');
      await client.cancel(id);
    } finally {
      // Whatever happened, the next tests get a model that answers.
      release();
      model.setScript(script());
    }
  });

  test('a stream cut mid-intent is a disconnect: the client reconnects with Last-Event-ID and still gets the outcome', async () => {
    const streams: AbortController[] = [];
    const headers: Headers[] = [];
    const cutting = new DaemonClient({
      baseUrl: daemon.url,
      token,
      fetch: (input, init) => {
        if (!String(input).includes('/events')) return fetch(input, init);
        const connection = new AbortController();
        streams.push(connection);
        headers.push(new Headers(init?.headers));
        return fetch(input, { ...init, signal: AbortSignal.any([connection.signal, ...(init?.signal ? [init.signal] : [])]) });
      },
    });
    const answer = await delegate(cutting, 'careful, with a flaky network', {
      approver: async () => {
        // The network drops the stream while the person is deciding.
        streams[0]?.abort();
        return { approved: true, answer: 'yes' };
      },
    });
    assert.equal(answer, 'All done.');
    assert.ok(headers.length >= 2, 'it subscribed again');
    assert.equal(headers[0]?.get('last-event-id'), null);
    assert.match(headers[1]?.get('last-event-id') ?? '', /^\d+(\.\d+)?$/, 'resuming from the last event id');
  });

  test('dispatch-then-subscribe race: a gate invoked before the stream opens is answered from the snapshot', async () => {
    let pending: (() => void) | undefined;
    const instrumented = instrumentedFetch({
      onEvents: (attempt) => {
        if (attempt > 1) return undefined;
        // Hold the first subscribe until the daemon is already waiting at the gate.
        return new Promise<void>((resolve) => {
          pending = resolve;
        });
      },
    });
    const racing = new DaemonClient({ baseUrl: daemon.url, token, fetch: instrumented.fetch });
    let id = '';
    const outcome = delegate(racing, 'race me', { approver: approveAll, onSubmitted: (intentId) => (id = intentId) });
    await eventually(async () => id !== '' && (await client.pendingGates(id)).length === 1, 'the gate is pending before the stream opens', 20_000);
    pending?.();
    assert.equal(await outcome, 'All done.');
  });

  test('polling alone drives the run once stream reconnects are exhausted', async () => {
    const clock = new ManualClock();
    const instrumented = instrumentedFetch({ onEvents: () => 'fail' });
    const blind = new DaemonClient({ baseUrl: daemon.url, token, fetch: instrumented.fetch });
    let settled = false;
    const outcome = delegate(blind, 'no stream today', { approver: approveAll, clock, maxStreamReconnects: 2 });
    outcome.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Move time one poll interval at a time, each once the previous poll's requests have come back.
    while (!settled) {
      await eventually(() => settled || instrumented.inFlight === 0, 'the poll answered', 20_000);
      if (!settled) clock.advance(1_500);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(await outcome, 'All done.');
    assert.equal(instrumented.eventHeaders.length, 3, 'one subscribe and two reconnects, then polling');
  });

  test('following an intent that has already ended answers at once: its snapshot, one status read, no poll or reconnect', async () => {
    let id = '';
    assert.equal(await delegate(client, 'done before anyone follows', { approver: approveAll, onSubmitted: (intentId) => (id = intentId) }), 'All done.');
    const counted = instrumentedFetch();
    let outcome: string | undefined;
    // The clock never moves: an outcome that waited for a poll interval or a reconnect's backoff would never come.
    void follow(new DaemonClient({ baseUrl: daemon.url, token, fetch: counted.fetch }), id, { clock: new ManualClock() }).then((answer) => {
      outcome = answer;
    });
    await eventually(() => outcome !== undefined, 'the outcome without the clock moving');
    assert.equal(outcome, 'All done.');
    assert.deepEqual(counted.requests, ['GET /events', `GET /messages/async/${id}`]);
  });

  test('a stream that ends after its snapshot again and again is reconnected with growing backoff, not every 250 ms', async () => {
    const { intent_id: id } = await client.submit('a stream that keeps closing');
    const snapshot = `id: 3\nevent: snapshot\ndata: ${JSON.stringify({ intent_id: id, status: 'executing', last_seq: 3, pending_gates: [] })}\n\n`;
    const closing = instrumentedFetch({ onEvents: () => new Response(snapshot, { headers: { 'content-type': 'text/event-stream' } }) });
    const time = new ManualClock();
    const backoffs: number[] = [];
    // The first backoffs under the 1.5 s poll interval pass at once; the rest, the polls and the maximum wait wait on
    // the manual clock.
    const clock = {
      now: () => time.now(),
      sleep: (ms: number, signal?: AbortSignal) => {
        const backoff = ms !== 1_500 && ms < 60_000;
        if (backoff) backoffs.push(ms);
        return backoff && ms < 1_500 && backoffs.length <= 6 ? Promise.resolve() : time.sleep(ms, signal);
      },
    };
    const outcome = follow(new DaemonClient({ baseUrl: daemon.url, token, fetch: closing.fetch }), id, { approver: approveAll, clock, maxStreamReconnects: 3 });
    try {
      await eventually(() => backoffs.length >= 4, 'the stream given up on');
      assert.deepEqual(backoffs, [250, 500, 1_000, 2_000]);
      assert.equal(closing.eventHeaders.length, 4, 'one subscribe and three reconnects');
      assert.equal(closing.eventHeaders[1]?.get('last-event-id'), '3', 'each resuming from the snapshot');
      // The polls drive it from here: they answer its gate, then see it complete.
      while ((await client.status(id)).status !== 'completed') {
        await eventually(() => closing.inFlight === 0, 'the poll answered', 20_000);
        time.advance(1_500);
        await new Promise((resolve) => setImmediate(resolve));
      }
      time.advance(1_500);
      assert.equal(await outcome, 'All done.');
    } finally {
      // Whatever happened, the daemon's one walk is free for the next tests.
      await client.cancel(id).catch(() => {});
    }
  });

  test('two clients on one intent answer its gate once', async () => {
    const claims = mkdtempSync(join(tmpdir(), 'gate-claims-'));
    try {
      const { intent_id: id } = await client.submit('shared intent');
      let asked = 0;
      const approver: Approver = async () => {
        asked++;
        return { approved: true, answer: 'yes' };
      };
      const claimGate = folderGateClaims(claims);
      const [first, second] = await Promise.all([follow(client, id, { approver, claimGate }), follow(client, id, { approver, claimGate })]);
      assert.deepEqual([first, second], ['All done.', 'All done.']);
      assert.equal(asked, 1, 'one approver was asked');
      const kinds = (await client.intent(id)).envelopes.map((envelope: { kind: string }) => envelope.kind);
      assert.equal(kinds.filter((kind: string) => kind === 'gate.answered').length, 1);
    } finally {
      rmSync(claims, { recursive: true, force: true });
    }
  });
});
