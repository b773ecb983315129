import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { confirmationDigest } from '../src/invoke/confirmation.ts';
import { credentialFor, keyringOf } from './harness.ts';
import { calendarEvents, connectorId, mailModify, startWorkspace, type Workspace } from './workspace.ts';

const mail = { to: ['bob@example.com'], subject: 'Hi', body: 'Hello' };

for (const engine of testEngines()) {
  describe(`POST /v1/invoke on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine);
    });
    after(() => w.close());

    const sends = () => w.google.requests.filter((r) => r.path.endsWith('/messages/send')).length;

    test('needs the transport bearer and a principal token', async () => {
      const body = { connector: connectorId, tool: 'mail_search', arguments: { query: 'x' } };
      assert.equal((await w.s.call('POST', '/v1/invoke', { body, bearer: null })).status, 401);
      const noPrincipal = await w.s.call('POST', '/v1/invoke', { body });
      assert.equal(noPrincipal.status, 401);
      assert.match(noPrincipal.body.error?.message ?? '', /X-Connector-Agent/);
    });

    test('arguments are checked against the tool’s schema: 400 naming the field', async () => {
      const user = await w.connectedUser();
      const cases: [string, Record<string, unknown>, string, RegExp][] = [
        ['mail_send', { subject: 's', body: 'b' }, 'arguments.to', /arguments\.to is required/],
        ['mail_send', { ...mail, to: ['not an address'] }, 'arguments.to[0]', /arguments\.to\[0\] must match format "email"/],
        ['mail_send', { ...mail, bcc: ['x@example.com'] }, 'arguments.bcc', /is not an argument of mail_send/],
        ['mail_search', { query: 'x', max_results: 51 }, 'arguments.max_results', /must be <= 50/],
        ['mail_search', { query: 'x', max_results: '5' }, 'arguments.max_results', /must be integer/],
        ['calendar_create', { summary: 's', start: 'tomorrow', end: '2026-03-03T11:00:00Z' }, 'arguments.start', /date-time/],
      ];
      for (const [tool, args, field, message] of cases) {
        const answer = await w.invoke(user.token, tool, args);
        assert.equal(answer.status, 400, `${tool} ${JSON.stringify(args)}`);
        assert.equal(answer.body.error?.code, 'invalid_request');
        assert.equal((answer.body.error as { field?: string }).field, field);
        assert.match(answer.body.error?.message ?? '', message);
      }
      assert.equal(w.google.requests.filter((r) => r.authorization === `Bearer ${user.credential.accessToken}`).length, 0);
    });

    test('an unknown connector or tool is 404 pointing at the catalogue', async () => {
      const user = await w.connectedUser();
      const tool = await w.invoke(user.token, 'mail_delete', {});
      assert.equal(tool.status, 404);
      assert.match(tool.body.error?.message ?? '', /no tool "mail_delete".*GET \/v1\/connectors/);
      const connector = await w.s.call('POST', '/v1/invoke', { token: user.token, body: { connector: 'dropbox', tool: 'x', arguments: {} } });
      assert.equal(connector.status, 404);
    });

    test('not connected (and another owner’s connection does not count): 409 naming POST /v1/connect', async () => {
      await w.connectedUser();
      const stranger = await w.s.agent();
      const answer = await w.invoke(stranger.token, 'mail_search', { query: 'x' });
      assert.equal(answer.status, 409);
      assert.equal((answer.body.error as { reason?: string }).reason, 'not_connected');
      assert.equal((answer.body.error as { connect?: string }).connect, 'POST /v1/connect');
      assert.match(answer.body.error?.message ?? '', /google-workspace is not connected.*POST \/v1\/connect/);
    });

    test('a scope the connection was not granted: 403 naming it, and the provider is not called', async () => {
      const user = await w.connectedUser([calendarEvents]);
      const before = w.google.requests.length;
      const answer = await w.invoke(user.token, 'mail_search', { query: 'x' });
      assert.equal(answer.status, 403);
      assert.equal(answer.body.error?.code, 'forbidden');
      assert.equal((answer.body.error as { scope?: string }).scope, mailModify);
      assert.match(answer.body.error?.message ?? '', /mail_search needs scope https:\/\/www\.googleapis\.com\/auth\/gmail\.modify/);
      assert.equal(w.google.requests.length, before);
      assert.equal((await w.invoke(user.token, 'calendar_list', {})).status, 200);
    });

    test('a consequential tool: 409 confirmation_required saying what to confirm; the confirmation then sends once', async () => {
      const user = await w.connectedUser();
      const before = sends();
      const refused = await w.invoke(user.token, 'mail_send', mail);
      assert.equal(refused.status, 409);
      const error = refused.body.error as unknown as { reason: string; confirm: { tool: string; digest: string }; action: string; message: string };
      assert.equal(error.reason, 'confirmation_required');
      assert.deepEqual(error.confirm, { tool: 'mail_send', digest: confirmationDigest(connectorId, 'mail_send', mail) });
      assert.equal(error.action, 'send an email to bob@example.com with subject "Hi"');
      assert.match(error.message, /confirm that the agent may send an email to bob@example\.com/);
      assert.equal(sends(), before);
      // The refusal's `confirm` member, sent back as is, with the arguments in another key order: same digest.
      const reordered = { body: mail.body, subject: mail.subject, to: mail.to };
      const accepted = await w.invoke(user.token, 'mail_send', reordered, { confirm: error.confirm });
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal(sends(), before + 1);
    });

    test('a confirmation for other arguments or another tool is refused (confirmation_mismatch) and sends nothing', async () => {
      const user = await w.connectedUser();
      const confirm = { tool: 'mail_send', digest: confirmationDigest(connectorId, 'mail_send', mail) };
      const before = sends();
      const other = await w.invoke(user.token, 'mail_send', { ...mail, to: ['eve@example.com'] }, { confirm });
      assert.equal(other.status, 409);
      assert.equal((other.body.error as { reason?: string }).reason, 'confirmation_mismatch');
      const event = { summary: 's', start: '2026-03-03T10:00:00Z', end: '2026-03-03T11:00:00Z' };
      const otherTool = await w.invoke(user.token, 'calendar_create', event, {
        confirm: { tool: 'mail_send', digest: confirmationDigest(connectorId, 'calendar_create', event) },
      });
      assert.equal((otherTool.body.error as { reason?: string }).reason, 'confirmation_mismatch');
      assert.equal(sends(), before);
      const malformed = await w.invoke(user.token, 'mail_send', mail, { confirm: { tool: 'mail_send', digest: 'yes' } });
      assert.equal(malformed.status, 400);
    });

    test('the provider refuses the credential (401) and the refresh is refused too: 409 needs_reconnect, later calls 409 unsent', async () => {
      const user = await w.connectedUser();
      w.google.revoke(user.credential.accessToken);
      const refreshes = w.oauth.calls.length;
      const refused = await w.invoke(user.token, 'mail_search', { query: 'x' });
      assert.equal(refused.status, 409);
      assert.equal((refused.body.error as { reason?: string }).reason, 'needs_reconnect');
      assert.match(refused.body.error?.message ?? '', /needs reconnecting.*POST \/v1\/connect/);
      // One refresh was tried (the seeded refresh token is unknown to the provider: invalid_grant).
      assert.deepEqual(
        w.oauth.calls.slice(refreshes).map((c) => [c.grantType, c.error]),
        [['refresh_token', 'invalid_grant']],
      );
      const listed = await w.s.call('GET', '/v1/connections', { token: user.token });
      assert.equal(listed.body.data.connections[0].status, 'needs_reconnect');
      const before = w.google.requests.length;
      const later = await w.invoke(user.token, 'mail_search', { query: 'x' });
      assert.equal(later.status, 409);
      assert.equal((later.body.error as { reason?: string }).reason, 'needs_reconnect');
      assert.equal(w.google.requests.length, before);
      assert.equal(w.oauth.calls.length, refreshes + 1);
    });

    test('provider refusals map: 403 insufficientPermissions → 403 naming the scope, 404 → not_found, 500/429/quota → 503 retryable', async () => {
      const user = await w.connectedUser([mailModify, calendarEvents], [calendarEvents]);
      const scope = await w.invoke(user.token, 'mail_search', { query: 'x' });
      assert.equal(scope.status, 403);
      assert.equal((scope.body.error as { provider_reason?: string }).provider_reason, 'insufficientPermissions');
      assert.match(scope.body.error?.message ?? '', /lacks scope https:\/\/www\.googleapis\.com\/auth\/gmail\.modify \(insufficientPermissions\)/);

      const missing = await w.invoke(user.token, 'calendar_update', { event_id: 'nope', summary: 'x' }, { confirmed: true });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error?.code, 'not_found');
      assert.equal((missing.body.error as { provider_reason?: string }).provider_reason, 'notFound');

      for (const [status, reason] of [
        [500, 'backendError'],
        [429, 'rateLimitExceeded'],
        [403, 'userRateLimitExceeded'],
      ] as const) {
        w.google.failNext({ method: 'GET', path: /\/events$/ }, { status, reason, message: 'try later' });
        const answer = await w.invoke(user.token, 'calendar_list', {});
        assert.equal(answer.status, 503, `${status} ${reason}`);
        assert.deepEqual([answer.body.error?.code, answer.body.error?.retryable], ['unavailable', true]);
        assert.equal((answer.body.error as { provider_reason?: string }).provider_reason, reason);
      }
      const listed = await w.s.call('GET', '/v1/connections', { token: user.token });
      assert.equal(listed.body.data.connections[0].status, 'connected', 'only a 401 marks the connection');
    });

    test('a credential under a removed vault key fails loudly (503 vault_key_missing); the gates before it still answer first', async () => {
      const agent = await w.s.agent();
      const elsewhere = w.s.withKeys(keyringOf(['gone']));
      await elsewhere.repository.save(agent.owner, connectorId, [calendarEvents], credentialFor('gone'));
      const before = w.google.requests.length;
      const refused = await w.invoke(agent.token, 'calendar_list', {});
      assert.equal(refused.status, 503);
      assert.deepEqual([(refused.body.error as { reason?: string }).reason, refused.body.error?.retryable], ['vault_key_missing', false]);
      // The scope gate needs no decryption, so it refuses as usual.
      assert.equal((await w.invoke(agent.token, 'mail_search', { query: 'x' })).status, 403);
      assert.equal(w.google.requests.length, before);
    });

    test('an unreachable provider is 503 unavailable', async () => {
      const down = await startWorkspace(engine);
      await down.google.close();
      const user = await down.connectedUser();
      const answer = await down.invoke(user.token, 'calendar_list', {});
      assert.equal(answer.status, 503);
      assert.equal((answer.body.error as { reason?: string }).reason, 'provider_unavailable');
      await down.s.close();
      await down.oauth.close();
    });
  });
}
