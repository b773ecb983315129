import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { testEngines } from '@platform/testkit/databases';
import { type MemoryServer, startOnFreshDatabase } from './harness.ts';

interface ToolText {
  isError?: boolean;
  content: { type: string; text: string }[];
  // biome-ignore lint/suspicious/noExplicitAny: the structured result of whichever tool was called.
  structuredContent?: any;
}

for (const engine of testEngines()) {
  describe(`MCP over Streamable HTTP on ${engine.name}`, () => {
    let server: MemoryServer;
    let client: Client;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ server, dispose } = await startOnFreshDatabase(engine));
      client = await server.mcp();
    });
    after(() => dispose());

    const callTool = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolText;

    it('lists the six tools with schemas and descriptions an LLM can follow', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['remember', 'recall', 'search', 'forget', 'get', 'history'],
      );
      for (const tool of tools) {
        assert.ok((tool.description ?? '').length > 40, `${tool.name} has a description`);
        assert.equal(tool.inputSchema.type, 'object');
      }
      const remember = tools.find((tool) => tool.name === 'remember');
      assert.deepEqual(remember?.inputSchema.required, ['memories']);
      assert.equal(tools.find((tool) => tool.name === 'forget')?.annotations?.destructiveHint, true);
      assert.equal(tools.find((tool) => tool.name === 'recall')?.annotations?.readOnlyHint, true);
    });

    it('remembers, recalls, searches, reads, supersedes, shows history and forgets through the tools', async () => {
      const stored = await callTool('remember', {
        memories: [
          { content: 'The user lives in Lisbon.', kind: 'fact', tags: ['home'], key: 'user.home_city' },
          { content: 'The user prefers window seats on long flights.', kind: 'preference', tags: ['travel'] },
        ],
      });
      assert.equal(stored.isError, undefined);
      const [lisbon, seats] = stored.structuredContent.memories;
      assert.equal(lisbon.status, 'created');

      const recalled = await callTool('recall', { query: 'which seat does the user like when flying?' });
      assert.equal(recalled.structuredContent.memories[0].id, seats.id);
      assert.match(recalled.content[0]?.text ?? '', /window seats/);

      const moved = await callTool('remember', { memories: [{ content: 'The user moved to Porto.', kind: 'fact', key: 'user.home_city' }] });
      assert.deepEqual(moved.structuredContent.memories[0].superseded, [lisbon.id]);

      const where = await callTool('recall', { query: 'where does the user live?' });
      const ids = where.structuredContent.memories.map((memory: { id: string }) => memory.id);
      assert.ok(ids.includes(moved.structuredContent.memories[0].id));
      assert.ok(!ids.includes(lisbon.id), 'the superseded city is not recalled');

      const found = await callTool('search', { query: 'Lisbon', include_superseded: true });
      assert.equal(found.structuredContent.memories[0].id, lisbon.id);
      assert.equal(found.structuredContent.memories[0].status, 'superseded');

      const got = await callTool('get', { id: lisbon.id });
      assert.equal(got.structuredContent.superseded_by, moved.structuredContent.memories[0].id);

      const history = await callTool('history', { id: lisbon.id });
      assert.deepEqual(
        history.structuredContent.chain.map((entry: { id: string }) => entry.id),
        [lisbon.id, moved.structuredContent.memories[0].id],
      );
      assert.equal(history.structuredContent.current, moved.structuredContent.memories[0].id);

      const forgotten = await callTool('forget', { id: seats.id });
      assert.equal(forgotten.structuredContent.status, 'forgotten');
      const after = await callTool('recall', { query: 'window seats flights' });
      assert.ok(!after.structuredContent.memories.some((memory: { id: string }) => memory.id === seats.id));
    });

    it('answers a bad argument with a tool error the model can read, not a protocol failure', async () => {
      const missing = await callTool('remember', {});
      assert.equal(missing.isError, true);
      assert.match(missing.content[0]?.text ?? '', /invalid_request: memories is required/);
      const typo = await callTool('remember', { memories: [{ content: 'x', contnet: 'x' }] });
      assert.match(typo.content[0]?.text ?? '', /unknown field "contnet"/);
      const unknown = await callTool('get', { id: '01234567-89ab-7def-8123-456789abcdef' });
      assert.match(unknown.content[0]?.text ?? '', /not_found: memory 01234567-89ab-7def-8123-456789abcdef not found/);
      const badId = await callTool('get', { id: 'nope' });
      assert.match(badId.content[0]?.text ?? '', /id is not a memory id/);
      const noQuery = await callTool('recall', {});
      assert.match(noQuery.content[0]?.text ?? '', /recall needs a non-empty query/);
    });

    it('refuses MCP without the bearer or with a wrong one', async () => {
      for (const bearer of [null, 'wrong-token']) {
        const answer = await server.http('POST', '/mcp', {
          bearer,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        });
        assert.equal(answer.status, 401);
        assert.equal(answer.json.error.code, 'unauthorized');
      }
      await assert.rejects(server.mcp('wrong-token'));
    });

    it('answers GET and DELETE on /mcp with 405 and a body that is not JSON with a JSON-RPC parse error', async () => {
      assert.equal((await server.http('GET', '/mcp')).status, 405);
      assert.equal((await server.http('DELETE', '/mcp')).status, 405);
      const garbled = await server.http('POST', '/mcp', { body: '{"jsonrpc":', headers: { accept: 'application/json, text/event-stream' } });
      assert.equal(garbled.status, 400);
      assert.equal(garbled.json.error.code, -32700);
    });
  });
}
