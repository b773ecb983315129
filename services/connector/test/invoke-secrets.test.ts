import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestEngine, testEngines } from '@platform/testkit/databases';
import { capturingLogger, transportToken } from './harness.ts';
import { calendarEvents, startWorkspace, type Workspace } from './workspace.ts';

const engine = testEngines()[0] as TestEngine;

describe('tool calls leak no token', () => {
  const capture = capturingLogger();
  let w: Workspace;
  before(async () => {
    w = await startWorkspace(engine, { logger: capture.logger });
  });
  after(() => w.close());

  test('successes and every provider refusal: no OAuth token, bearer or principal token in a response or a log line', async () => {
    const user = await w.connectedUser();
    const texts: string[] = [];
    const run = async (tool: string, args: Record<string, unknown>, confirmed = false) =>
      texts.push((await w.invoke(user.token, tool, args, { confirmed })).text);
    await run('mail_send', { to: ['bob@example.com'], subject: 's', body: 'b' }, true);
    await run('mail_search', { query: 'b' });
    await run('calendar_create', { summary: 's', start: '2026-03-03T10:00:00Z', end: '2026-03-03T11:00:00Z' }, true);
    await run('calendar_list', {});
    for (const [status, reason] of [
      [500, 'backendError'],
      [403, 'insufficientPermissions'],
      [404, 'notFound'],
      [400, 'invalid'],
    ] as const) {
      w.google.failNext({ path: /\/events$/ }, { status, reason });
      await run('calendar_list', {});
    }
    const limited = await w.connectedUser([calendarEvents]);
    texts.push((await w.invoke(limited.token, 'mail_search', { query: 'x' })).text);
    w.google.revoke(user.credential.accessToken);
    await run('mail_read', { message_id: 'x' });

    const logged = capture.text();
    assert.match(logged, /marked needs_reconnect/);
    const output = `${texts.join('\n')}\n${logged}`;
    for (const secret of [
      user.credential.accessToken,
      user.credential.refreshToken,
      limited.credential.accessToken,
      transportToken,
      user.token,
      'ya29.',
      '1//',
    ]) {
      assert.ok(!output.includes(secret), `output holds ${secret.slice(0, 8)}…`);
    }
    assert.doesNotMatch(texts.join('\n'), /authorization|www-authenticate|access_token|refresh_token/i);
  });
});
