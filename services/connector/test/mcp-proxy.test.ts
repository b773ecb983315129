import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { type AgentKey, generateAgentKey } from '@platform/client/agent-key';
import { confirmationDigest } from '@platform/kit/connector-confirmation';
import { testEngines } from '@platform/testkit/databases';
import { parseRawMessage } from '@platform/testkit/google-apis';
import { generateRegistry } from '../src/mcp/registry.ts';
import { credentialFor, transportToken } from './harness.ts';
import { calendarEvents, connectorId, mailModify, startWorkspace, type Workspace } from './workspace.ts';

const cli = join(import.meta.dirname, '..', '..', '..', 'cli', 'bin', 'platform.js');
const mail = { to: ['bob@example.com'], subject: 'Hi', body: 'Hello' };
const sendTool = `${connectorId}_mail_send`;

type CallResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

/** The proxy's settings for an agent key: only what it needs, as a daemon's stdio child gets it. */
function proxyEnv(url: string, key: AgentKey, userId: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    PLATFORM_CONNECTOR_URL: url,
    PLATFORM_CONNECTOR_TOKEN: transportToken,
    PLATFORM_AGENT_KEY: key.seedHex,
    PLATFORM_AGENT_USER_ID: userId,
    ...extra,
  };
}

/** The official SDK client speaking to `platform mcp connector` over stdio. */
async function proxyClient(env: Record<string, string>) {
  const client = new Client({ name: 'proxy-test', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', 'connector'], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallResult;
  return { client, call, stderr: () => stderr };
}

/** A proxy this test spawns itself, so every byte of its stdout is kept; the SDK client talks through it. */
class CapturingStdio implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  stdout = '';
  stderr = '';
  readonly child: ChildProcessWithoutNullStreams;

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [cli, 'mcp', 'connector'], { env, stdio: 'pipe' });
    const buffer = new ReadBuffer();
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString('utf8');
      buffer.append(chunk);
      for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage()) this.onmessage?.(message);
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk;
    });
  }
  async start() {
    this.child.once('close', () => this.onclose?.());
  }
  async send(message: JSONRPCMessage) {
    this.child.stdin.write(serializeMessage(message));
  }
  async close() {
    this.child.stdin.end();
  }
}

const text = (result: CallResult) => result.content.map((part) => part.text).join('\n');

for (const engine of testEngines()) {
  describe(`platform mcp connector (the stdio proxy) on ${engine.name}`, () => {
    let w: Workspace;
    let url: string;
    const userId = randomUUID();
    const key = generateAgentKey(userId);
    let proxy: Awaited<ReturnType<typeof proxyClient>>;
    const sends = () => w.google.requests.filter((request) => request.path.endsWith('/messages/send'));

    before(async () => {
      w = await startWorkspace(engine);
      url = await w.s.app.listen({ host: '127.0.0.1', port: 0 });
      const credential = await w.s.seed(userId, [mailModify, calendarEvents], credentialFor('proxy'));
      w.google.grant(credential.accessToken, [mailModify, calendarEvents]);
      proxy = await proxyClient(proxyEnv(url, key, userId));
    });
    after(async () => {
      await proxy?.client.close();
      await w?.close();
    });

    test('tools/list is the registry generated from the connector definitions', async () => {
      const { tools } = await proxy.client.listTools();
      assert.deepEqual(tools, generateRegistry().tools);
      const send = tools.find((tool) => tool.name === sendTool);
      assert.deepEqual(send?._meta?.['platform/connector'], { connector: connectorId, tool: 'mail_send', confirmation: 'required' });
    });

    test('a read tool answers the scoped result, as the agent’s user', async () => {
      w.google.addMessage({ from: 'alice@example.com', to: 'me@example.com', subject: 'Plans', date: 'Sun, 01 Mar 2026 09:00:00 +0000', text: 'Lunch?' });
      const result = await proxy.call(`${connectorId}_mail_search`, { query: 'from:alice' });
      assert.equal(result.isError, undefined, text(result));
      const messages = result.structuredContent?.messages as { subject: string; from: string }[];
      assert.deepEqual(
        messages.map((message) => [message.from, message.subject]),
        [['alice@example.com', 'Plans']],
      );
      assert.deepEqual(JSON.parse(text(result)), result.structuredContent);
    });

    test('a consequential tool without a confirmation is refused with what to confirm and how; nothing is sent', async () => {
      const result = await proxy.call(sendTool, mail);
      assert.equal(result.isError, true);
      const digest = confirmationDigest(connectorId, 'mail_send', mail);
      assert.match(text(result), /send an email to bob@example\.com with subject "Hi"/);
      assert.ok(text(result).includes(`params._meta {"platform/confirm": {"tool":"mail_send","digest":"${digest}"}}`), text(result));
      assert.deepEqual((result.structuredContent?.error as { confirm?: unknown } | undefined)?.confirm, { tool: 'mail_send', digest });
      // A confirmation slipped into the arguments is an argument the tool does not have, not a confirmation.
      const smuggled = await proxy.call(sendTool, { ...mail, confirm: { tool: 'mail_send', digest } });
      assert.equal(smuggled.isError, true);
      assert.match(text(smuggled), /arguments\.confirm is not an argument of mail_send/);
      assert.equal(sends().length, 0);
    });

    test('with the digest of exactly these arguments in _meta the mail is sent; another mail’s digest is refused', async () => {
      const other = confirmationDigest(connectorId, 'mail_send', { ...mail, to: ['eve@example.com'] });
      const mismatch = await proxy.call(sendTool, mail, { 'platform/confirm': { tool: 'mail_send', digest: other } });
      assert.equal(mismatch.isError, true);
      assert.match(text(mismatch), /the confirmation given is for another tool or other arguments/);
      assert.equal(sends().length, 0);

      const digest = confirmationDigest(connectorId, 'mail_send', mail);
      const sent = await proxy.call(sendTool, mail, { 'platform/confirm': { tool: 'mail_send', digest } });
      assert.equal(sent.isError, undefined, text(sent));
      assert.match(String(sent.structuredContent?.id), /^\w+$/);
      assert.equal(sends().length, 1);
      const raw = parseRawMessage(String((sends()[0]?.body as { raw?: string } | undefined)?.raw));
      assert.deepEqual([raw.headers.to, raw.headers.subject, raw.body], ['bob@example.com', 'Hi', 'Hello']);
    });

    test('a user who has not connected is told which tool connects, and that tool answers the authorization URL', async () => {
      const strangerId = randomUUID();
      const stranger = await proxyClient(proxyEnv(url, generateAgentKey(strangerId), strangerId));
      try {
        const result = await stranger.call(`${connectorId}_calendar_list`, {});
        assert.equal(result.isError, true);
        assert.match(text(result), /google-workspace is not connected for this user; connect it first with POST \/v1\/connect/);
        assert.match(text(result), /call the tool google-workspace_connect/);
        const connect = await stranger.call(`${connectorId}_connect`, {});
        assert.equal(connect.isError, undefined, text(connect));
        const authorization = new URL(String(connect.structuredContent?.authorization_url));
        assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
        assert.ok(text(connect).includes(authorization.toString()), 'the model is given the URL to hand the user');
        const unknown = await stranger.call('google-workspace_mail_delete', {});
        assert.equal(unknown.isError, true);
        assert.match(text(unknown), /no tool "google-workspace_mail_delete"/);
      } finally {
        await stranger.client.close();
      }
    });

    test('every line of the proxy’s stdout is a JSON-RPC message; its logs went to stderr; stdin ending stops it with 0', async () => {
      const transport = new CapturingStdio(proxyEnv(url, key, userId, { LOG_LEVEL: 'debug' }));
      const exited = once(transport.child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
      const client = new Client({ name: 'capture-test', version: '1.0.0' });
      await client.connect(transport);
      await client.listTools();
      await client.callTool({ name: `${connectorId}_mail_search`, arguments: { query: 'x' } });
      await client.callTool({ name: sendTool, arguments: mail });
      await client.callTool({ name: sendTool, arguments: { to: ['not an address'] } });
      await client.callTool({ name: 'nope', arguments: {} });
      await client.close();
      assert.deepEqual(await exited, [0, null], transport.stderr);
      assert.ok(transport.stdout.endsWith('\n'));
      const lines = transport.stdout.slice(0, -1).split('\n');
      assert.ok(lines.length >= 6, transport.stdout);
      for (const line of lines) {
        const message = JSON.parse(line) as { jsonrpc: string };
        assert.equal(message.jsonrpc, '2.0', line);
      }
      assert.match(transport.stderr, /connector MCP proxy on stdio/);
      assert.ok(!transport.stderr.includes(key.seedHex), 'the key never reaches a log');
    });

    test('SIGTERM stops it with 0; an unreachable service is a tool error, not a crash', async () => {
      const unreachable = new CapturingStdio(proxyEnv('http://127.0.0.1:9', key, userId));
      const exited = once(unreachable.child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
      const client = new Client({ name: 'unreachable-test', version: '1.0.0' });
      await client.connect(unreachable);
      const result = (await client.callTool({ name: `${connectorId}_mail_search`, arguments: { query: 'x' } })) as CallResult;
      assert.equal(result.isError, true);
      assert.match(text(result), /the connector service at http:\/\/127\.0\.0\.1:9 could not be reached \(.*\)/);
      unreachable.child.kill('SIGTERM');
      assert.deepEqual(await exited, [0, null], unreachable.stderr);
    });

    test('CONNECTOR_TOOL_REGISTRY: a registry file is served as written; a file of another format or version is refused on stderr', async () => {
      const folder = mkdtempSync(join(tmpdir(), 'connector-registry-'));
      try {
        const registry = generateRegistry();
        const reads = { ...registry, tools: registry.tools.filter((tool) => tool._meta['platform/connector'].confirmation === 'none') };
        writeFileSync(join(folder, 'reads.json'), JSON.stringify(reads));
        const fromFile = await proxyClient(proxyEnv(url, key, userId, { CONNECTOR_TOOL_REGISTRY: join(folder, 'reads.json') }));
        try {
          assert.deepEqual(
            (await fromFile.client.listTools()).tools.map((tool) => tool.name),
            reads.tools.map((tool) => tool.name),
          );
          assert.equal((await fromFile.call(sendTool, mail)).isError, true, 'a tool left out of the file is not served');
        } finally {
          await fromFile.client.close();
        }

        writeFileSync(join(folder, 'future.json'), JSON.stringify({ ...registry, version: 2 }));
        const refused = new CapturingStdio(proxyEnv(url, key, userId, { CONNECTOR_TOOL_REGISTRY: join(folder, 'future.json') }));
        const [code] = (await once(refused.child, 'close')) as [number | null];
        assert.equal(code, 1);
        assert.match(refused.stderr, /future\.json is registry version 2; this proxy reads version 1 only/);
        assert.equal(refused.stdout, '', 'nothing on the protocol channel');
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });
}
