import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { ConnectorClient } from '@platform/client/connector-client';
import { ServiceCallError } from '@platform/client/service-session';
import { confirmationDigest } from '@platform/kit/connector-confirmation';
import { testEngines } from '@platform/testkit/databases';
import { credentialFor, transportToken } from './harness.ts';
import { calendarEvents, connectorId, mailModify, startWorkspace, type Workspace } from './workspace.ts';

const mail = { to: ['bob@example.com'], subject: 'Hi', body: 'Hello' };

/** The refusal a promise ends with (the test fails if it succeeds). */
async function refusal(promise: Promise<unknown>): Promise<ServiceCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceCallError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

// The platform's ConnectorClient (packages/client) against the real service over HTTP: packages do not import
// services, so the client's test against the service lives with the service.
for (const engine of testEngines()) {
  describe(`ConnectorClient against the connector service on ${engine.name}`, () => {
    let w: Workspace;
    let url: string;
    const userId = randomUUID();
    let client: ConnectorClient;

    before(async () => {
      w = await startWorkspace(engine);
      url = await w.s.app.listen({ host: '127.0.0.1', port: 0 });
      const credential = await w.s.seed(userId, [mailModify, calendarEvents], credentialFor('client'));
      w.google.grant(credential.accessToken, [mailModify, calendarEvents]);
      client = new ConnectorClient({ baseUrl: url, transportToken, key: generateAgentKey(userId) });
    });
    after(() => w?.close());

    test('the catalogue (no principal needed) and the user’s own connections', async () => {
      const { connectors } = await client.catalogue();
      const workspace = connectors.find((connector) => connector.id === connectorId);
      assert.deepEqual(workspace?.tools.find((tool) => tool.name === 'mail_send')?.consequential, true);
      const { connections } = await client.connections();
      assert.deepEqual(
        connections.map((connection) => [connection.connector, connection.status, connection.scopes]),
        [[connectorId, 'connected', [mailModify, calendarEvents]]],
      );
    });

    test('invoke: a read answers its result; a consequential tool is refused with the confirmation in details, then sent with it', async () => {
      const listed = await client.invoke({ connector: connectorId, tool: 'calendar_list', arguments: {} });
      assert.deepEqual(listed.result, { events: [], next_page_token: null });

      const refused = await refusal(client.invoke({ connector: connectorId, tool: 'mail_send', arguments: mail }));
      const digest = confirmationDigest(connectorId, 'mail_send', mail);
      assert.deepEqual([refused.status, refused.code, refused.reason], [409, 'conflict', 'confirmation_required']);
      assert.deepEqual(refused.details.confirm, { tool: 'mail_send', digest });
      assert.equal(refused.details.action, 'send an email to bob@example.com with subject "Hi"');
      assert.match(refused.serviceMessage, /^mail_send acts outside the user's account/);

      const sent = await client.invoke({ connector: connectorId, tool: 'mail_send', arguments: mail, confirm: { tool: 'mail_send', digest } });
      assert.equal(sent.tool, 'mail_send');
      assert.equal(w.google.requests.filter((request) => request.path.endsWith('/messages/send')).length, 1);
    });

    test('connect answers the authorization URL; disconnect removes the connection, and the tools then say not connected', async () => {
      const started = await client.connect(connectorId);
      assert.equal(started.connector, connectorId);
      assert.equal(new URL(started.authorization_url).searchParams.get('code_challenge_method'), 'S256');
      assert.ok(Date.parse(started.expires_at) > 0);
      await client.disconnect(connectorId);
      assert.deepEqual((await client.connections()).connections, []);
      const refused = await refusal(client.invoke({ connector: connectorId, tool: 'calendar_list', arguments: {} }));
      assert.equal(refused.reason, 'not_connected');
    });

    test('another user is not connected: the refusal names the connect route; a wrong bearer is 401', async () => {
      const stranger = new ConnectorClient({ baseUrl: url, transportToken, key: generateAgentKey() });
      const refused = await refusal(stranger.invoke({ connector: connectorId, tool: 'mail_search', arguments: { query: 'x' } }));
      assert.deepEqual([refused.status, refused.reason, refused.details.connect], [409, 'not_connected', 'POST /v1/connect']);
      const wrong = new ConnectorClient({ baseUrl: url, transportToken: 'wrong', key: generateAgentKey(userId) });
      assert.equal((await refusal(wrong.connections())).status, 401);
    });
  });
}
