import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { testEngines } from '@platform/testkit/databases';
import { minimalTests } from './fixtures/minimal-test.ts';
import { counter } from './fixtures/projects.ts';
import { alice, type Contracts, startContracts, transportToken, useTestChain, walletKeyHex } from './harness.ts';
import { RecordingStdioTransport } from './stdio-client.ts';

const nineTools = [
  'tachyon_compile',
  'tachyon_test',
  'tachyon_simulate',
  'tachyon_deploy',
  'tachyon_call',
  'tachyon_chain_list',
  'tachyon_chain_register',
  'tachyon_artifact_get',
  'tachyon_registry_lookup',
];
const readOnlyTools = ['tachyon_compile', 'tachyon_test', 'tachyon_simulate', 'tachyon_chain_list', 'tachyon_artifact_get', 'tachyon_registry_lookup'];

const chain = useTestChain();

for (const engine of testEngines()) {
  describe(`HTTP and POST /rpc on ${engine.name}`, () => {
    let c: Contracts;
    before(async () => {
      c = await startContracts(engine, { localRpcUrl: chain.url });
    });
    after(() => c.close());

    const rpc = (body: unknown, caller?: string) => c.call('POST', '/rpc', { body, ...(caller ? { caller } : {}) });
    const callTool = async (name: string, args: unknown, caller?: string) =>
      (await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }, caller)).body as never as {
        result: { isError: boolean; structuredContent: Record<string, never>; content: Array<{ text: string }> };
      };

    describe('security', () => {
      test('every route but / and /healthz needs the bearer, compared exactly', async () => {
        assert.equal((await c.call('GET', '/healthz', { bearer: null })).status, 200);
        assert.deepEqual((await c.call('GET', '/', { bearer: null })).body.data, { service: 'contracts', version: '0.1.0', health: '/healthz' });
        for (const [method, url] of [
          ['POST', '/v1/compile'],
          ['POST', '/rpc'],
          ['GET', '/v1/chains'],
          ['POST', '/v1/deploy'],
          ['GET', '/v1/registry/deployments'],
        ] as const) {
          const missing = await c.call(method, url, { bearer: null, body: {} });
          assert.equal(missing.status, 401, url);
          assert.equal(missing.body.error?.code, 'unauthorized');
          assert.equal((await c.call(method, url, { bearer: `${transportToken}x`, body: {} })).status, 401);
        }
      });

      test('non-JSON bodies are 415, oversized bodies 413, unknown routes 404', async () => {
        const text = await c.app.inject({
          method: 'POST',
          url: '/v1/compile',
          headers: { authorization: `Bearer ${transportToken}`, 'content-type': 'text/plain' },
          payload: 'x',
        });
        assert.equal(text.statusCode, 415);
        const big = await c.call('POST', '/v1/compile', { body: { sources: { 'src/A.sol': 'x'.repeat(5 * 1024 * 1024) } } });
        assert.equal(big.status, 413);
        assert.equal((await c.call('GET', '/v1/nope')).status, 404);
      });
    });

    describe('JSON-RPC', () => {
      const rawRpc = (payload: string) =>
        c.app.inject({ method: 'POST', url: '/rpc', headers: { 'content-type': 'application/json', authorization: `Bearer ${transportToken}` }, payload });

      test('a body that is not JSON is a JSON-RPC parse error (-32700) with a null id, as a 400', async () => {
        const response = await rawRpc('{"jsonrpc": "2.0", ');
        assert.equal(response.statusCode, 400);
        assert.deepEqual(response.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error: the body is not valid JSON' } });
      });

      test('an id JSON cannot write back is answered with a null id; a long method name is not echoed whole; bad text is a JSON-RPC 400', async () => {
        const infinite = await rawRpc('{"jsonrpc":"2.0","id":1e400,"method":"ping"}');
        assert.equal(infinite.statusCode, 200);
        assert.deepEqual(infinite.json(), { jsonrpc: '2.0', id: null, result: {} });
        const long = await rawRpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'm'.repeat(1_000_000) }));
        assert.equal(long.statusCode, 200);
        assert.ok(long.body.length < 300, `the answer echoed ${long.body.length} bytes`);
        assert.match(long.json().error.message, /^method m{64}… \(1000000 characters\) not found$/);
        const nul = await rawRpc('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tachyon_chain_list","arguments":{"x":"a\\u0000"}}}');
        assert.equal(nul.statusCode, 400);
        assert.deepEqual(nul.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'params.arguments.x must not contain NUL (U+0000)' } });
      });

      test('initialize and tools/list: the nine tools with schemas and read-only/destructive annotations', async () => {
        const init = await rpc({ jsonrpc: '2.0', id: 'i', method: 'initialize', params: {} });
        assert.equal((init.body as never as { result: { serverInfo: { name: string } } }).result.serverInfo.name, 'platform-contracts');
        const list = (await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' })).body as never as {
          id: number;
          result: {
            tools: Array<{
              name: string;
              inputSchema: { type: string; required?: string[] };
              annotations: { readOnlyHint: boolean; destructiveHint: boolean };
            }>;
          };
        };
        assert.equal(list.id, 2);
        const tools = list.result.tools;
        assert.deepEqual(
          tools.map((tool) => tool.name),
          nineTools,
        );
        for (const tool of tools) {
          assert.equal(tool.inputSchema.type, 'object');
          assert.equal(tool.annotations.readOnlyHint, readOnlyTools.includes(tool.name), tool.name);
        }
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
        assert.equal(byName.tachyon_deploy?.annotations.destructiveHint, true);
        assert.equal(byName.tachyon_chain_register?.annotations.destructiveHint, false);
        assert.deepEqual(byName.tachyon_deploy?.inputSchema.required, ['idempotency_key', 'chain_id', 'contract']);
      });

      test('tools/call runs the same operation as the HTTP route, with the caller header', async () => {
        const viaRpc = await callTool('tachyon_compile', { sources: counter, project_id: 'via-rpc' });
        assert.equal(viaRpc.result.isError, false);
        assert.equal(viaRpc.result.structuredContent.project_id, 'via-rpc');
        assert.deepEqual(JSON.parse(viaRpc.result.content[0]?.text ?? ''), viaRpc.result.structuredContent);
        const viaHttp = await c.call('GET', '/v1/artifacts/Counter?project_id=via-rpc');
        assert.equal(viaHttp.status, 200, 'the artifact the RPC compile stored is there over HTTP');
        const deployed = await callTool(
          'tachyon_deploy',
          { idempotency_key: 'rpc-1', chain_id: 'local', contract: 'Counter', project_id: 'via-rpc', constructor_args: [3] },
          alice,
        );
        assert.equal(deployed.result.isError, false, JSON.stringify(deployed.result));
        assert.equal(deployed.result.structuredContent.status, 'confirmed');
        const lookup = await c.call('GET', '/v1/registry/lookup?idempotency_key=rpc-1&chain_id=local');
        assert.equal(lookup.body.data.address, deployed.result.structuredContent.address);
      });

      test('a failing tool is a tool error (isError) with the HTTP code and message; bad arguments too', async () => {
        const unknown = await callTool('tachyon_artifact_get', { name: 'Nope', project_id: 'via-rpc' });
        assert.equal(unknown.result.isError, true);
        assert.deepEqual(unknown.result.structuredContent, {
          error: { contract: 'Nope', code: 'not_found', message: 'unknown contract "Nope" in project via-rpc; compile it first', retryable: false },
        });
        const invalid = await callTool('tachyon_compile', { sources: counter, extra: 1 });
        assert.equal(invalid.result.isError, true);
        assert.match(invalid.result.content[0]?.text ?? '', /^invalid_request: arguments must NOT have additional properties \(extra\)/);
        const noCaller = await callTool('tachyon_deploy', {
          idempotency_key: 'rpc-2',
          chain_id: 'local',
          contract: 'Counter',
          project_id: 'via-rpc',
          constructor_args: [3],
        });
        assert.match(noCaller.result.content[0]?.text ?? '', /X-Platform-Actor-DID/);
      });

      test('protocol mistakes are JSON-RPC errors; notifications get no answer; batches work', async () => {
        const cases: Array<[unknown, number]> = [
          [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tachyon_nope' } }, -32602],
          [{ jsonrpc: '2.0', id: 1, method: 'resources/list' }, -32601],
          [{ jsonrpc: '1.0', id: 1, method: 'tools/list' }, -32600],
          [[], -32600],
          [42, -32600],
        ];
        for (const [body, code] of cases) {
          const response = await rpc(body);
          assert.equal(response.status, 200);
          assert.equal((response.body as never as { error: { code: number } }).error.code, code, JSON.stringify(body));
        }
        assert.equal(
          (
            await c.app.inject({
              method: 'POST',
              url: '/rpc',
              headers: { authorization: `Bearer ${transportToken}` },
              payload: { jsonrpc: '2.0', method: 'notifications/initialized' },
            })
          ).statusCode,
          204,
        );
        const batch = (
          await rpc([
            { jsonrpc: '2.0', id: 1, method: 'ping' },
            { jsonrpc: '2.0', method: 'notifications/initialized' },
            { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          ])
        ).body as never as Array<{ id: number }>;
        assert.deepEqual(
          batch.map((entry) => entry.id),
          [1, 2],
        );
      });
    });
  });
}

describe('MCP over stdio, with the official SDK client', () => {
  let dataDir: string;
  let transport: RecordingStdioTransport;
  let client: Client;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'contracts-mcp-'));
    transport = new RecordingStdioTransport(process.execPath, [new URL('../src/mcp-stdio.ts', import.meta.url).pathname], {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'debug',
      CONTRACTS_LOCAL_RPC_URL: chain.url,
      CONTRACTS_LOCAL_NODE: 'external',
      CONTRACTS_WALLET_KEY: walletKeyHex,
      CONTRACTS_FUZZ_RUNS: '16',
      PLATFORM_AGENT_DID: alice,
    });
    client = new Client({ name: 'contracts-test', version: '0.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    return result as unknown as { isError?: boolean; structuredContent: Record<string, never> };
  };

  test('lists the nine tools with their annotations', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      nineTools,
    );
    for (const tool of tools) assert.equal(tool.annotations?.readOnlyHint, readOnlyTools.includes(tool.name), tool.name);
  });

  test('every one of the nine tools works end to end', async () => {
    const compiled = await call('tachyon_compile', { sources: counter, project_id: 'stdio' });
    assert.equal(compiled.structuredContent.success, true);
    const tested = await call('tachyon_test', { sources: minimalTests });
    assert.deepEqual(tested.structuredContent.summary, { suites: 1, passed: 2, failed: 1, skipped: 0 });
    const artifact = await call('tachyon_artifact_get', { name: 'Counter', project_id: 'stdio' });
    assert.equal(artifact.structuredContent.name, 'Counter');
    const chains = await call('tachyon_chain_list', {});
    assert.equal(chains.structuredContent.active, 'local');
    const registered = await call('tachyon_chain_register', { id: 'anvil', name: 'Anvil', rpc_url: chain.url, chain_id: 31337 });
    assert.equal(registered.isError, false, JSON.stringify(registered));
    const deployed = await call('tachyon_deploy', {
      idempotency_key: 'stdio-1',
      chain_id: 'local',
      contract: 'Counter',
      project_id: 'stdio',
      constructor_args: [5],
    });
    assert.equal(deployed.structuredContent.status, 'confirmed', JSON.stringify(deployed));
    const read = await call('tachyon_call', { to: deployed.structuredContent.address, method: 'count' });
    assert.equal(read.structuredContent.decoded, '5');
    const simulated = await call('tachyon_simulate', { chain_id: 'local', to: deployed.structuredContent.address, data: '0x06661abd' });
    assert.equal(simulated.structuredContent.decoded, '5');
    const lookup = await call('tachyon_registry_lookup', { idempotency_key: 'stdio-1', chain_id: 'local' });
    assert.equal(lookup.structuredContent.address, deployed.structuredContent.address);
    const missing = await call('tachyon_artifact_get', { name: 'Nope', project_id: 'stdio' });
    assert.equal(missing.isError, true);
  });

  test('stdout carries only JSON-RPC messages; the logs went to stderr', () => {
    assert.ok(transport.stdoutLines.length > 10);
    for (const line of transport.stdoutLines) {
      const message = JSON.parse(line) as { jsonrpc?: string };
      assert.equal(message.jsonrpc, '2.0', line.slice(0, 200));
    }
    assert.match(transport.stderr, /contract engine MCP server on stdio/);
  });

  test('ending stdin stops the server', async () => {
    await transport.close();
    assert.equal(transport.child?.exitCode, 0);
  });
});
