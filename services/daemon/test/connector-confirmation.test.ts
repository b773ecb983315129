import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { confirmationDigest } from '@platform/kit/connector-confirmation';
import { silentLogger } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { type AgentIdentity, loadIdentity } from '../src/identity/agent-identity.ts';
import { gateFor } from '../src/tools/gate-policy.ts';
import { type McpToolProvider, providerFromSetting } from '../src/tools/mcp-connection.ts';
import { readMcpServers } from '../src/tools/mcp-server-settings.ts';
import type { ToolInfo } from '../src/tools/tool-types.ts';
import { railScript, removeFolder, type Stack, startDaemon, startStack, type TestDaemon, toolStep, userId } from './harness.ts';

const program = fileURLToPath(new URL('./fixtures/confirming-mcp-server.ts', import.meta.url));
const context = { intentId: 'i'.repeat(64), nodeId: 'send', conversationId: 'default', signal: new AbortController().signal };
const message = { to: 'bob@example.com', text: 'Hello' };

describe('a server’s confirmation-required tools (the connector’s proxy): the key handed over, the gate, the digest sent', () => {
  let folder: string;
  let identity: AgentIdentity;
  let provider: McpToolProvider;
  let tools: Map<string, ToolInfo>;

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'daemon-confirm-'));
    // The key comes from a file (generated once into the data folder), which env_pass could not hand over.
    identity = loadIdentity({ userId, agentKeyHex: '', dataDir: folder });
    const [setting] = readMcpServers({
      PATH: process.env.PATH,
      SECRET: 'not for the child',
      DAEMON_MCP_SERVERS: JSON.stringify([{ name: 'acme', command: process.execPath, args: [program], agent_key: true }]),
    });
    provider = providerFromSetting(setting as NonNullable<typeof setting>, silentLogger, 20_000, identity);
    tools = new Map((await provider.list()).map((tool) => [tool.name, tool]));
  });
  after(async () => {
    await provider?.close();
    removeFolder(folder);
  });

  test('agent_key: the child acts as the daemon’s DID, and gets no other setting of the daemon’s', async () => {
    const outcome = await provider.call(tools.get('acme.whoami') as ToolInfo, {}, context);
    assert.ok(outcome.ok);
    const { did, env } = outcome.result as { did: string; env: string[] };
    assert.equal(did, identity.did);
    assert.ok(!env.includes('SECRET') && !env.includes('DAEMON_MCP_SERVERS'), env.join(' '));
    assert.ok(env.includes('PLATFORM_AGENT_KEY') && env.includes('PLATFORM_AGENT_USER_ID'));
    assert.deepEqual(
      readMcpServers({ DAEMON_MCP_SERVERS: JSON.stringify([{ name: 'acme', command: 'x' }]) })[0],
      { name: 'acme', transport: 'stdio', command: 'x', args: [], env: {} },
      'without agent_key no key is handed over',
    );
    assert.throws(() => readMcpServers({ DAEMON_MCP_SERVERS: JSON.stringify([{ name: 'a', url: 'http://x', agent_key: true }]) }), /agent_key is for stdio/);
  });

  test('a confirmation-required tool is always gated, exemptions and read-only claims notwithstanding; its reads are not', () => {
    const send = tools.get('acme.send') as ToolInfo;
    assert.deepEqual(send.confirmation, { connector: 'acme', tool: 'send_message' });
    const decision = gateFor(send, message, new Set(['acme.send']));
    assert.equal(decision?.always, true);
    assert.equal(
      decision?.reason,
      'acts outside your account: send a message to someone outside the account (acme.send) {"to":"bob@example.com","text":"Hello"}',
    );
    assert.equal(gateFor({ ...send, readOnly: true, server: 'memory' }, message, new Set())?.always, true);
    const look = tools.get('acme.look') as ToolInfo;
    assert.equal(look.confirmation, undefined);
    assert.equal(gateFor(look, {}, new Set()), undefined);
  });

  test('approved, the call carries the digest of exactly the arguments sent in _meta; not approved, no confirmation at all', async () => {
    const send = tools.get('acme.send') as ToolInfo;
    const approved = await provider.call(send, message, { ...context, approved: true });
    assert.ok(approved.ok);
    const { meta, arguments: sent } = approved.result as { meta: Record<string, unknown>; arguments: unknown };
    assert.deepEqual(sent, message, 'the confirmation is never an argument');
    assert.deepEqual(meta['platform/confirm'], { tool: 'send_message', digest: confirmationDigest('acme', 'send_message', message) });
    const unapproved = await provider.call(send, message, context);
    assert.ok(unapproved.ok);
    assert.equal((unapproved.result as { meta: Record<string, unknown> | null }).meta?.['platform/confirm'], undefined);
    const read = await provider.call(tools.get('acme.look') as ToolInfo, {}, { ...context, approved: true });
    assert.equal((read.ok && (read.result as { meta: Record<string, unknown> | null }).meta?.['platform/confirm']) || undefined, undefined);
  });
});

describe('the walk: a confirmation-required step runs only after its gate, and only then confirmed', () => {
  let stack: Stack;
  let daemon: TestDaemon;

  before(async () => {
    stack = await startStack({ gateway: false });
    const servers = [{ name: 'acme', command: process.execPath, args: [program], agent_key: true }];
    daemon = await startDaemon({ ...stack.env, DAEMON_MCP_SERVERS: JSON.stringify(servers), DAEMON_UNGATED_TOOLS: 'acme.send' });
  });
  after(async () => {
    await daemon?.stop();
    await stack?.close();
    if (daemon) removeFolder(daemon.dataDir);
  });

  test('DAEMON_UNGATED_TOOLS cannot exempt it; approved, the server gets the digest of the arguments as resolved', async () => {
    stack.model.setScript(
      railScript({
        plans: [
          {
            steps: [
              toolStep('look', 'acme.look', { text: 'x' }),
              toolStep('send', 'acme.send', { to: 'bob@example.com', text: { $ref: 'look.tool' } }, ['look']),
            ],
          },
        ],
      }),
    );
    const { intent_id: id } = await daemon.ok('POST', '/messages/async', { prose: 'tell bob' });
    await eventually(() => (daemon.daemon.book.state(id)?.gates ?? []).length > 0, 'the gate');
    const state = (await daemon.ok('GET', `/intents/${id}`)).state;
    assert.deepEqual(
      state.steps.map((step: { id: string }) => step.id),
      ['look', 'send-approval', 'send'],
    );
    assert.equal(state.steps.find((step: { id: string }) => step.id === 'look').status, 'done', 'the read ran ungated');
    const [gate] = (await daemon.ok('GET', `/intents/${id}/gates`)).pending;
    assert.match(gate.question, /It acts outside your account: send a message to someone outside the account \(acme\.send\)/);
    await daemon.ok('POST', `/intents/${id}/gates/send-approval/answer`, { approved: true });
    await daemon.daemon.runner.waitForEnd(id);
    const done = (await daemon.ok('GET', `/intents/${id}`)).state.steps.find((step: { id: string }) => step.id === 'send');
    const resolved = { to: 'bob@example.com', text: 'look' };
    assert.deepEqual(done.result.arguments, resolved);
    assert.deepEqual(done.result.meta['platform/confirm'], { tool: 'send_message', digest: confirmationDigest('acme', 'send_message', resolved) });
  });
});
