import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually, pollUntil } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { startServiceProcess } from '@platform/testkit/service-process';
import { openSse } from '@platform/testkit/sse-client';
import { verifyIntentFolder } from '../src/journal/verify-folder.ts';
import { startNotesServer } from './fixtures/notes-mcp-server.ts';
import { daemonToken, gateStep, modelStep, railScript, removeFolder, type Stack, startDaemon, startStack, toolStep } from './harness.ts';

const seed = 'd4'.repeat(32);
const gatedPlan = { steps: [gateStep('ask', 'Go?', ['yes', 'no']), modelStep('work', 'Do it', ['ask'])] };

describe('restarts: nothing acknowledged is lost', () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack({ gateway: false, script: railScript({ plans: [gatedPlan], answer: 'Finished after the restart.' }) });
  });
  after(async () => {
    await stack?.close();
  });

  test('a graceful restart finds the intent at its gate, the queue behind it and the conversation; the journal replays over SSE', async () => {
    const first = await startDaemon(stack.env, { seed });
    const { intent_id: gated } = await first.ok('POST', '/messages/async', { prose: 'the gated one' });
    await eventually(() => (first.daemon.book.state(gated)?.gates ?? []).length === 1, 'at the gate');
    const { intent_id: queued } = await first.ok('POST', '/messages/async', { prose: 'the queued one' });
    await first.ok('POST', '/chat', { message: 'hello before the restart', conversation_id: 'kept' });
    const before = await first.ok('GET', `/intents/${gated}`);
    await first.stop();

    const second = await startDaemon(stack.env, { seed, dataDir: first.dataDir });
    try {
      const after = await second.ok('GET', `/intents/${gated}`);
      assert.deepEqual(after.envelopes.slice(0, before.envelopes.length), before.envelopes, 'every envelope as it was');
      assert.equal(after.envelopes.at(-1).kind, 'intent.resumed');
      assert.equal((await second.ok('GET', `/intents/${gated}/gates`)).pending[0].node_id, 'ask');
      assert.equal((await second.ok('GET', `/messages/async/${queued}`)).queue_position, 0, 'still queued, first in line');
      const transcript = await second.ok('GET', '/conversations/kept');
      assert.deepEqual(
        transcript.entries.map((entry: { role: string; text: string }) => [entry.role, entry.text]),
        [
          ['user', 'hello before the restart'],
          ['assistant', 'Hello!'],
        ],
      );

      const stream = await openSse(`${second.url}/events?intent_id=${gated}`, { authorization: `Bearer ${daemonToken}`, 'last-event-id': '2' });
      await eventually(() => stream.events.some((event) => event.event === 'gate.invoked'), 'replayed from the journal');
      assert.deepEqual(
        stream.events
          .slice(1)
          .filter((event) => event.id !== undefined)
          .map((event) => Number(event.id)),
        Array.from({ length: after.envelopes.length - 2 }, (_, index) => index + 3),
        'envelopes 3 onward, from disk, each once',
      );
      await second.ok('POST', `/intents/${gated}/gates/ask/answer`, { approved: true, answer: 'yes' });
      await eventually(() => stream.ended, 'the stream ends with the intent');
      assert.equal(stream.events.at(-1)?.event, 'intent.attest');
      assert.equal((await second.daemon.runner.waitForEnd(gated))?.status, 'completed');
      await eventually(() => (second.daemon.book.state(queued)?.gates ?? []).length === 1, 'the queued one ran next');
    } finally {
      await second.stop();
      removeFolder(first.dataDir);
    }
  });

  test('SIGKILL during a model step: the step runs again after the restart and the intent completes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'daemon-crash-'));
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    const script = railScript({ plans: [{ steps: [modelStep('work', 'Think hard')] }], answer: 'Thought it through.' });
    stack.model.setScript(async (request) => {
      if (request.system.includes('doing one step')) await held;
      return script(request);
    });
    const env = { ...stack.env, DAEMON_AGENT_KEY: seed };
    const crashing = await startServiceProcess('daemon', env, { dataDir });
    const stepRequests = () => stack.model.received.filter((request) => request.system.includes('doing one step')).length;
    const earlier = stepRequests();
    try {
      const submitted = await httpCall(crashing.url, 'POST', '/messages/async', { bearer: daemonToken, body: { prose: 'think hard' } });
      const id = submitted.json.data.intent_id;
      await pollUntil(() => stepRequests() > earlier, 'the step is with the model', { timeoutMs: 60_000 });
      // The model is asked while step.started is being written; kill only once it is on disk, so the restart sees it.
      await pollUntil(() => readdirSync(join(dataDir, 'journal', id)).some((name) => name.endsWith('-step.started.json')), 'the start is on disk', {
        timeoutMs: 60_000,
        intervalMs: 10,
      });
      await crashing.kill();
      release();
      const restarted = await startServiceProcess('daemon', env, { dataDir });
      try {
        await pollUntil(
          async () => (await httpCall(restarted.url, 'GET', `/messages/async/${id}`, { bearer: daemonToken })).json.data.status === 'completed',
          'completed after the restart',
          { timeoutMs: 60_000 },
        );
        const chain = (await httpCall(restarted.url, 'GET', `/intents/${id}`, { bearer: daemonToken })).json.data;
        const kinds = chain.envelopes.map((envelope: { kind: string }) => envelope.kind);
        assert.deepEqual(kinds.slice(-4), ['intent.resumed', 'step.started', 'step.completed', 'intent.attest']);
        assert.deepEqual(chain.envelopes.at(-4).body.rerun, ['work']);
        const verdict = await verifyIntentFolder(join(dataDir, 'journal', id), chain.public_key);
        assert.equal(verdict.ok, true, JSON.stringify(verdict));
        assert.deepEqual(
          readdirSync(join(dataDir, 'journal', id)).filter((name) => name.startsWith('.tmp')),
          [],
          'no temporary file left behind',
        );
      } finally {
        await restarted.stop();
      }
    } finally {
      removeFolder(dataDir);
    }
  });

  test('SIGKILL while a tool that writes elsewhere is running: the intent fails as interrupted instead of writing twice', async () => {
    const notes = await startNotesServer();
    const dataDir = mkdtempSync(join(tmpdir(), 'daemon-crash-'));
    stack.model.setScript(railScript({ plans: [{ steps: [toolStep('post', 'board.write', { text: 'pay rent [hang]' })] }] }));
    const env = {
      ...stack.env,
      DAEMON_AGENT_KEY: seed,
      DAEMON_UNGATED_TOOLS: 'board.write',
      DAEMON_MCP_SERVERS: JSON.stringify([{ name: 'board', url: notes.url }]),
    };
    const crashing = await startServiceProcess('daemon', env, { dataDir });
    try {
      const id = (await httpCall(crashing.url, 'POST', '/messages/async', { bearer: daemonToken, body: { prose: 'post the rent note' } })).json.data.intent_id;
      await pollUntil(() => notes.calls.some((call) => call.tool === 'write'), 'the write is in flight', { timeoutMs: 60_000 });
      await crashing.kill();
      const restarted = await startServiceProcess('daemon', env, { dataDir });
      try {
        const statusOf = async () => (await httpCall(restarted.url, 'GET', `/messages/async/${id}`, { bearer: daemonToken })).json.data;
        // Recovery runs just after the daemon starts listening.
        await pollUntil(async () => (await statusOf()).status !== 'executing', 'recovered', { timeoutMs: 60_000 });
        const status = await statusOf();
        assert.equal(status.status, 'failed');
        assert.equal(status.result.reason, 'interrupted');
        assert.match(status.result.error, /the daemon stopped while "board\.write \(post\)" \(board\.write\) was running; check its effect/);
        assert.equal(notes.calls.filter((call) => call.tool === 'write').length, 1, 'never sent twice');
      } finally {
        await restarted.stop();
      }
    } finally {
      // When the test failed before its own kill: the crashing daemon may still hold a hung write to the notes server,
      // whose close would otherwise wait for it for ever.
      await crashing.kill();
      await notes.close();
      removeFolder(dataDir);
    }
  });

  test('POST /shutdown drains: new work is refused, the step in flight finishes, the process exits, and the next start carries on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'daemon-drain-'));
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    const script = railScript({ plans: [{ steps: [modelStep('one', 'first'), modelStep('two', 'second', ['one'])] }], answer: 'Both done.' });
    stack.model.setScript(async (request) => {
      if (request.user.startsWith('first')) await held;
      return script(request);
    });
    const env = { ...stack.env, DAEMON_AGENT_KEY: seed };
    const draining = await startServiceProcess('daemon', env, { dataDir });
    try {
      const id = (await httpCall(draining.url, 'POST', '/messages/async', { bearer: daemonToken, body: { prose: 'two steps' } })).json.data.intent_id;
      await pollUntil(
        () => stack.model.received.some((request) => request.user.startsWith('first') && request.system.includes('doing one step')),
        'step one with the model',
        { timeoutMs: 60_000 },
      );
      const shutdown = await httpCall(draining.url, 'POST', '/shutdown', { bearer: daemonToken });
      assert.deepEqual([shutdown.status, shutdown.json.data.draining], [202, true]);
      const refused = await httpCall(draining.url, 'POST', '/messages/async', { bearer: daemonToken, body: { prose: 'more' } });
      assert.equal(refused.status, 503);
      const exit = new Promise<number | null>((resolve) => draining.process.once('exit', (code) => resolve(code)));
      release();
      assert.equal(await exit, 0, 'a clean exit');
      const restarted = await startServiceProcess('daemon', env, { dataDir });
      try {
        await pollUntil(
          async () => (await httpCall(restarted.url, 'GET', `/messages/async/${id}`, { bearer: daemonToken })).json.data.status === 'completed',
          'completed after the restart',
          { timeoutMs: 60_000 },
        );
        const kinds = (await httpCall(restarted.url, 'GET', `/intents/${id}`, { bearer: daemonToken })).json.data.envelopes.map(
          (envelope: { kind: string }) => envelope.kind,
        );
        const resumedAt = kinds.indexOf('intent.resumed');
        assert.ok(resumedAt > 0);
        assert.deepEqual(kinds.slice(resumedAt - 2, resumedAt), ['step.started', 'step.completed'], 'step one finished before the exit');
        assert.equal(kinds.filter((kind: string) => kind === 'step.started').length, 2, 'no step ran twice');
      } finally {
        await restarted.stop();
      }
    } finally {
      removeFolder(dataDir);
    }
  });
});
