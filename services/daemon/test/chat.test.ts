import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { compiled, modelStep, railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon } from './harness.ts';

describe('chat against the real gateway and memory server', () => {
  let stack: Stack;
  let daemon: TestDaemon;

  before(async () => {
    stack = await startStack({ services: ['memory'] });
    daemon = await startDaemon(stack.env);
  });
  after(async () => {
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('a turn remembers durable facts; a later turn recalls them into the prompt', async () => {
    stack.model.setScript(
      railScript({
        chat: (request) =>
          request.user.includes('allergic')
            ? { reply: 'Noted: no peanuts for you.', task: null, remember: ['The user is allergic to peanuts.'] }
            : { reply: 'You are allergic to peanuts.', task: null, remember: [] },
      }),
    );
    const first = await daemon.ok('POST', '/chat', { message: 'I am allergic to peanuts', conversation_id: 'kitchen' });
    assert.deepEqual([first.reply, first.intent_id, first.remembered], ['Noted: no peanuts for you.', null, 1]);
    const stored = await httpCall(stack.services.memory?.url as string, 'POST', '/v1/search', {
      bearer: stack.env.MEMORY_MCP_TOKEN,
      body: { query: 'peanuts' },
    });
    assert.equal(stored.json.data.memories[0].content, 'The user is allergic to peanuts.');

    const second = await daemon.ok('POST', '/chat', { message: 'What food should I avoid? Anything with peanuts?', conversation_id: 'kitchen' });
    assert.equal(second.recalled, 1);
    const prompt = stack.model.received.filter((request) => request.schemaName === 'chat_turn').at(-1);
    assert.match(prompt?.system ?? '', /What you remember about the user:\n- The user is allergic to peanuts\./);
    assert.match(prompt?.prompt ?? '', /I am allergic to peanuts[\s\S]*Noted: no peanuts for you\./, 'the conversation so far is in the prompt');

    const transcript = await daemon.ok('GET', '/conversations/kitchen');
    assert.deepEqual(
      transcript.entries.map((entry: { role: string; text: string }) => [entry.role, entry.text]),
      [
        ['user', 'I am allergic to peanuts'],
        ['assistant', 'Noted: no peanuts for you.'],
        ['user', 'What food should I avoid? Anything with peanuts?'],
        ['assistant', 'You are allergic to peanuts.'],
      ],
    );
  });

  test('asking for something to be done hands it to the rail; the answer is said in the conversation when it ends', async () => {
    stack.model.setScript(
      railScript({
        chat: () => ({ reply: 'On it.', task: 'Draft a shopping list without peanuts', remember: [] }),
        compile: compiled('draft a shopping list'),
        plans: [{ steps: [modelStep('list', 'Write the list')] }],
        answer: 'Here is your list: rice, beans.',
      }),
    );
    const turn = await daemon.ok('POST', '/chat', { message: 'Make me a shopping list', conversation_id: 'kitchen' });
    assert.equal(turn.reply, 'On it.');
    assert.match(turn.intent_id, /^[0-9a-f]{64}$/);
    const state = await daemon.daemon.runner.waitForEnd(turn.intent_id);
    assert.equal(state?.status, 'completed');
    assert.deepEqual(state?.source, { via: 'chat', conversation_id: 'kitchen' });
    await eventually(
      async () => (await daemon.ok('GET', '/conversations/kitchen')).entries.at(-1)?.text === 'Here is your list: rice, beans.',
      'the answer in the transcript',
      20_000,
    );
    const entries = (await daemon.ok('GET', '/conversations/kitchen')).entries.slice(-3);
    assert.deepEqual(
      entries.map((entry: { role: string; intent_id?: string }) => [entry.role, entry.intent_id]),
      [
        ['assistant', turn.intent_id],
        ['status', turn.intent_id],
        ['assistant', turn.intent_id],
      ],
    );
    assert.match(entries[1].text, /^Working on it \(intent [0-9a-f]{64}\): Draft a shopping list without peanuts$/);
  });

  test('a model that cannot answer is a clear 503 and a notice in the transcript; the budget is a 429', async () => {
    stack.model.setScript(() => ({ status: 500, message: 'upstream exploded' }));
    const failed = await daemon.call('POST', '/chat', { body: { message: 'hello', conversation_id: 'broken' } });
    assert.equal(failed.status, 503);
    assert.equal(failed.json.error.code, 'unavailable');
    assert.match(failed.json.error.message, /the model call failed \(500/);
    const transcript = await daemon.ok('GET', '/conversations/broken');
    assert.deepEqual(
      transcript.entries.map((entry: { role: string }) => entry.role),
      ['user', 'notice'],
    );

    // The operator sets this agent's daily cap to 0: the gateway refuses before forwarding.
    const cap = `/v1/admin/actors/${encodeURIComponent(daemon.daemon.identity.did)}/cap`;
    const gateway = stack.services.gateway?.url as string;
    assert.equal((await httpCall(gateway, 'PUT', cap, { bearer: 'gw-admin', body: { limit_credit: '0' } })).status, 200);
    try {
      const asked = stack.model.received.length;
      const spent = await daemon.call('POST', '/chat', { body: { message: 'hello again', conversation_id: 'broken' } });
      assert.deepEqual([spent.status, spent.json.error.code, spent.json.error.retryable], [429, 'rate_limited', false]);
      assert.match(spent.json.error.message, /the daily model budget is spent/);
      assert.equal(stack.model.received.length, asked, 'nothing reached the model');
    } finally {
      await httpCall(gateway, 'DELETE', cap, { bearer: 'gw-admin' });
    }
  });

  test('GET /conversations lists them; one not begun yet is empty, not a 404 (a new user’s first page logged one), and is not listed', async () => {
    const list = await daemon.ok('GET', '/conversations');
    assert.ok(list.conversations.some((conversation: { conversation_id: string }) => conversation.conversation_id === 'kitchen'));
    const missing = await daemon.call('GET', '/conversations/nowhere');
    assert.deepEqual([missing.status, missing.json.data], [200, { conversation_id: 'nowhere', entries: [] }]);
    assert.ok(
      !(await daemon.ok('GET', '/conversations')).conversations.some((conversation: { conversation_id: string }) => conversation.conversation_id === 'nowhere'),
    );
  });
});

describe('chat without a gateway', () => {
  test('answers 503 naming PLATFORM_GATEWAY_URL, never hangs', async () => {
    const daemon = await startDaemon({ PLATFORM_DAEMON_TOKEN: 'test-daemon-token-51d2' });
    try {
      const answer = await daemon.call('POST', '/chat', { body: { message: 'hello' } });
      assert.deepEqual([answer.status, answer.json.error.code, answer.json.error.retryable], [503, 'unavailable', false]);
      assert.match(answer.json.error.message, /set PLATFORM_GATEWAY_URL/);
    } finally {
      await daemon.stop();
      removeFolder(daemon.dataDir);
    }
  });
});
