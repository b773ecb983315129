import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@platform/testkit/eventually';
import { daemonToken, gateStep, modelStep, railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon } from './harness.ts';

const someId = 'a'.repeat(64);

/** Every route but /healthz, with a body that would be valid. */
const protectedRoutes: [string, string, unknown?][] = [
  ['GET', '/me'],
  ['GET', '/tools'],
  ['POST', '/chat', { message: 'hi' }],
  ['GET', '/conversations'],
  ['GET', '/conversations/default'],
  ['POST', '/messages', { prose: 'x' }],
  ['POST', '/messages/async', { prose: 'x' }],
  ['GET', `/messages/async/${someId}`],
  ['GET', '/intents'],
  ['GET', `/intents/${someId}`],
  ['POST', `/intents/${someId}/cancel`, {}],
  ['GET', `/intents/${someId}/gates`],
  ['POST', `/intents/${someId}/gates/ask/answer`, { approved: true }],
  ['GET', '/events'],
  ['POST', '/wake', { wake_message: 'x' }],
  ['POST', '/shutdown'],
];

describe('the HTTP surface: bearer, envelope, limits', () => {
  let stack: Stack;
  let daemon: TestDaemon;

  before(async () => {
    stack = await startStack({ gateway: false, script: railScript({ plans: [{ steps: [gateStep('ask', 'Go?', []), modelStep('do', 'do', ['ask'])] }] }) });
    daemon = await startDaemon({ ...stack.env, DAEMON_MAX_QUEUED_INTENTS: '2' });
  });
  after(async () => {
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('every route but /healthz needs the bearer: none or a wrong one is 401 before the body is read, and nothing happens', async () => {
    for (const [method, path, body] of protectedRoutes) {
      for (const bearer of [null, 'wrong-token', `${daemonToken}x`]) {
        const answer = await daemon.call(method, path, { bearer, ...(body === undefined ? {} : { body }) });
        assert.equal(answer.status, 401, `${method} ${path} with ${bearer}`);
        assert.deepEqual(Object.keys(answer.json.error).sort(), ['code', 'message', 'retryable']);
        assert.equal(answer.json.error.code, 'unauthorized');
      }
    }
    assert.equal(daemon.daemon.book.count, 0, 'no intent was created');
    assert.equal(stack.model.received.length, 0, 'no model was asked');
    const health = await daemon.call('GET', '/healthz', { bearer: null });
    assert.deepEqual([health.status, health.json.data.status], [200, 'ok']);
    assert.ok(!JSON.stringify(health.json).includes(daemonToken));
  });

  test('/me names the user, DID, key, models and services, and no secret', async () => {
    const me = await daemon.ok('GET', '/me');
    assert.equal(me.user_id, stack.env.DAEMON_USER_ID);
    assert.match(me.did, new RegExp(`^did:platform:${me.user_id}:${me.public_key.slice(0, 16)}$`));
    assert.equal(me.services.gateway.url, stack.model.url.replace(/\/$/, ''));
    assert.equal(me.services.memory, null);
    const text = JSON.stringify(me);
    for (const secret of [daemonToken, 'ab'.repeat(32), stack.env.PLATFORM_GATEWAY_TOKEN as string]) assert.ok(!text.includes(secret));
  });

  test('prose and messages at 16,000 characters are taken; one more is a 400 naming the field; bodies past 64 KiB are 413', async () => {
    const atLimit = await daemon.call('POST', '/messages/async', { body: { prose: 'p'.repeat(16_000), strategy: 'enqueue' } });
    assert.equal(atLimit.status, 202);
    const past = await daemon.call('POST', '/messages/async', { body: { prose: 'p'.repeat(16_001) } });
    assert.deepEqual([past.status, past.json.error.code], [400, 'invalid_request']);
    assert.match(past.json.error.message, /prose must NOT have more than 16000 characters/);
    const chat = await daemon.call('POST', '/chat', { body: { message: 'm'.repeat(16_001) } });
    assert.match(chat.json.error.message, /message must NOT have more than 16000 characters/);
    const huge = await daemon.call('POST', '/messages/async', { body: JSON.stringify({ prose: 'x', pad: 'y'.repeat(70_000) }) });
    assert.deepEqual([huge.status, huge.json.error.code], [413, 'payload_too_large']);
    await daemon.ok('POST', `/intents/${atLimit.json.data.intent_id}/cancel`, {});
  });

  test('bad input is a clear 4xx and changes nothing', async () => {
    const cases: [string, string, { body?: unknown; headers?: Record<string, string> }, number, RegExp][] = [
      ['POST', '/messages/async', { body: 'not json', headers: { 'content-type': 'application/json' } }, 400, /not valid JSON/],
      ['POST', '/messages/async', { body: 'prose=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, /application\/json/],
      ['POST', '/messages/async', { body: { prose: 'x', extra: true } }, 400, /additional properties/],
      ['POST', '/messages/async', { body: { prose: '' } }, 400, /fewer than 1 characters/],
      ['POST', '/messages/async', { body: { prose: 'x', strategy: 'shout' } }, 400, /strategy/],
      ['POST', '/messages/async', { body: { prose: 'null \u0000 byte' } }, 400, /prose must not contain NUL/],
      ['GET', '/messages/async/not-an-id', {}, 400, /must match pattern/],
      ['GET', `/messages/async/${someId}`, {}, 404, /no intent/],
      ['GET', `/intents/${someId}`, {}, 404, /no intent/],
      ['POST', `/intents/${someId}/gates/ask/answer`, { body: { approved: 'yes' } }, 400, /approved must be boolean/],
      ['POST', `/intents/${someId}/gates/ask/answer`, { body: { approved: true, answer: 'a'.repeat(2_001) } }, 400, /more than 2000/],
      ['POST', `/intents/${someId}/gates/ask/answer`, { body: { approved: true } }, 404, /no intent/],
      ['POST', '/chat', { body: { message: 'x', conversation_id: 'c'.repeat(201) } }, 400, /conversation_id/],
      ['POST', '/chat', { body: { message: 'x', conversation_id: 'two\nlines' } }, 400, /conversation_id/],
      ['GET', '/intents?limit=0', {}, 400, /limit/],
      ['GET', '/intents?limit=201', {}, 400, /limit/],
      ['GET', '/nowhere', {}, 404, /no route for GET \/nowhere/],
    ];
    const before = daemon.daemon.book.count;
    for (const [method, path, init, status, message] of cases) {
      const answer = await daemon.call(method, path, init);
      assert.equal(answer.status, status, `${method} ${path}: ${answer.text}`);
      assert.match(answer.json.error.message, message, `${method} ${path}`);
      assert.equal(typeof answer.json.error.retryable, 'boolean');
    }
    assert.equal(daemon.daemon.book.count, before);
    assert.equal((await daemon.call('GET', '/intents?limit=200')).status, 200);
  });

  test('the queue holds DAEMON_MAX_QUEUED_INTENTS; past it enqueue is 409 busy; an unknown gate is 404', async () => {
    const { intent_id: walking } = await daemon.ok('POST', '/messages/async', { prose: 'first' });
    await eventually(() => (daemon.daemon.book.state(walking)?.gates ?? []).length > 0, 'walking at its gate');
    const queued = [await daemon.ok('POST', '/messages/async', { prose: 'second' }), await daemon.ok('POST', '/messages/async', { prose: 'third' })];
    const full = await daemon.call('POST', '/messages/async', { body: { prose: 'fourth' } });
    assert.deepEqual([full.status, full.json.error.code], [409, 'busy']);
    assert.match(full.json.error.message, /2 intents are already waiting/);
    const unknownGate = await daemon.call('POST', `/intents/${walking}/gates/nope/answer`, { body: { approved: true } });
    assert.deepEqual([unknownGate.status, unknownGate.json.error.code], [404, 'not_found']);
    for (const { intent_id: id } of queued) await daemon.ok('POST', `/intents/${id}/cancel`, {});
    await daemon.ok('POST', `/intents/${walking}/cancel`, {});
    const listed = await daemon.ok('GET', '/intents?status=cancelled&limit=2');
    assert.equal(listed.intents.length, 2);
    assert.ok(listed.next_before, 'a cursor to the next page');
    const next = await daemon.ok('GET', `/intents?status=cancelled&limit=2&before=${encodeURIComponent(listed.next_before)}`);
    assert.ok(next.intents.every((intent: { created_at: string }) => intent.created_at < listed.next_before));
  });
});
