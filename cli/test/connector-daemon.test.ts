import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DaemonClient } from '@platform/client/daemon-client';
import { delegate, type GateRequest } from '@platform/client/delegate';
import { connectorOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { testEngines } from '@platform/testkit/databases';
import { parseRawMessage } from '@platform/testkit/google-apis';
import { compiled, railScript, toolStep } from '@platform/testkit/rail-script';
import { type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { credentialFor, transportToken } from '../../services/connector/test/harness.ts';
import { calendarEvents, mailModify, startWorkspace, type Workspace } from '../../services/connector/test/workspace.ts';

const bin = join(import.meta.dirname, '..', 'bin', 'platform.js');
const daemonToken = 'connector-e2e-daemon-token';
const mail = { to: ['bob@example.com'], subject: 'Lunch', body: 'Friday at noon?' };

/** Every file under `folder`, as text. */
function filesUnder(folder: string): string {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

describe('a daemon process sends mail through the connector’s stdio proxy, behind its gate, without ever holding the OAuth token', () => {
  let w: Workspace;
  let model: ScriptedModel;
  let daemon: ServiceProcess;
  const userId = randomUUID();
  let credential: Awaited<ReturnType<Workspace['s']['seed']>>;

  before(async () => {
    w = await startWorkspace(testEngines()[0] as NonNullable<ReturnType<typeof testEngines>[0]>);
    const connectorUrl = await w.s.app.listen({ host: '127.0.0.1', port: 0 });
    credential = await w.s.seed(userId, [mailModify, calendarEvents], credentialFor('e2e'));
    w.google.grant(credential.accessToken, [mailModify, calendarEvents]);
    model = await startScriptedModel(
      railScript({
        compile: compiled('email bob about lunch'),
        plans: [{ steps: [toolStep('send', 'connector.google-workspace_mail_send', mail)] }],
        answer: 'Bob has the invitation.',
      }),
    );
    const proxy = {
      name: 'connector',
      command: process.execPath,
      args: [bin, 'mcp', 'connector'],
      env_pass: ['PLATFORM_CONNECTOR_URL', 'PLATFORM_CONNECTOR_TOKEN'],
      agent_key: true,
    };
    // The daemon's key is generated into its data folder (no DAEMON_AGENT_KEY), as in development.
    daemon = await startServiceProcess('daemon', {
      PLATFORM_GATEWAY_URL: model.url,
      PLATFORM_DAEMON_TOKEN: daemonToken,
      DAEMON_MODEL_RETRIES: '0',
      DAEMON_USER_ID: userId,
      DAEMON_MCP_SERVERS: JSON.stringify([proxy]),
      // Asking to exempt it changes nothing: the tool says it needs a confirmation.
      DAEMON_UNGATED_TOOLS: 'connector.google-workspace_mail_send',
      PLATFORM_CONNECTOR_URL: connectorUrl,
      // The user's own connector token, as the router and `platform up` hand it: never the connector's root.
      PLATFORM_CONNECTOR_TOKEN: new OwnerTokens(transportToken, connectorOwnerTokens).mint(userId),
      // The proxy's stderr is logged at debug: searched below for tokens.
      LOG_LEVEL: 'debug',
    });
  });
  after(async () => {
    await daemon?.stop();
    await model?.close();
    await w?.close();
  });

  test('the plan’s mail_send waits at the gate; approved, the stand-in receives the mail; no token in the daemon’s logs or files', async () => {
    const client = new DaemonClient({ baseUrl: daemon.url, token: daemonToken });
    const tools = (await (await fetch(`${daemon.url}/tools`, { headers: { authorization: `Bearer ${daemonToken}` } })).json()) as {
      data: { tools: { name: string; read_only: boolean }[] };
    };
    assert.ok(tools.data.tools.some((tool) => tool.name === 'connector.google-workspace_mail_search' && tool.read_only));

    const asked: GateRequest[] = [];
    let sentBeforeApproval = -1;
    const answer = await delegate(client, 'email bob about lunch', {
      approver: async (gate) => {
        asked.push(gate);
        sentBeforeApproval = w.google.requests.filter((request) => request.path.endsWith('/messages/send')).length;
        return { approved: true, answer: 'approve' };
      },
    });
    assert.equal(answer, 'Bob has the invitation.');
    assert.equal(asked.length, 1);
    assert.match(asked[0]?.question ?? '', /acts outside your account: send an email from the user’s mailbox .*bob@example\.com/);
    assert.equal(sentBeforeApproval, 0, 'nothing was sent before the user approved');

    const sends = w.google.requests.filter((request) => request.path.endsWith('/messages/send'));
    assert.equal(sends.length, 1);
    assert.equal(sends[0]?.authorization, `Bearer ${credential.accessToken}`, 'the service called Google with the vaulted token');
    const raw = parseRawMessage(String((sends[0]?.body as { raw?: string } | undefined)?.raw));
    assert.deepEqual([raw.headers.to, raw.headers.subject, raw.body], ['bob@example.com', 'Lunch', 'Friday at noon?']);

    const me = await client.me();
    assert.equal(me.user_id, userId);
    const seen = `${daemon.logs.join('\n')}\n${filesUnder(daemon.dataDir)}`;
    assert.match(seen, /connector MCP proxy on stdio/, 'the proxy’s own log reached the daemon’s');
    for (const secret of [credential.accessToken, credential.refreshToken]) assert.ok(!seen.includes(secret), 'an OAuth token reached the daemon');
  });
});
