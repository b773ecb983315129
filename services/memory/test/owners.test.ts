import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { memoryOwnerTokens, OwnerTokens } from '@platform/kit/auth/owner-token';
import { migrate } from '@platform/kit/db/migrate';
import { testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { serviceName } from '../src/app.ts';
import { migrations } from '../src/db/migrations.ts';
import { searchVectorSql } from '../src/memory/sql-fragments.ts';
import { freshDatabase, type MemoryServer, startMemory, startOnFreshDatabase, startTime, token } from './harness.ts';

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  // biome-ignore lint/suspicious/noExplicitAny: the structured result of whichever tool was called.
  structuredContent?: any;
}

const tokens = new OwnerTokens(token, memoryOwnerTokens);
const alice = tokens.mint('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
const bob = tokens.mint('user.bob');

for (const engine of testEngines()) {
  describe(`owners on ${engine.name}: each user's token reaches their own memories only`, () => {
    let server: MemoryServer;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ server, dispose } = await startOnFreshDatabase(engine));
    });
    after(() => dispose());

    /** A tool as the holder of `bearer`: the answer's status and body. */
    const as = (bearer: string) => async (tool: string, args: unknown) => {
      const answer = await server.call(tool, args, { bearer });
      return { status: answer.status, json: answer.json, data: answer.json.data };
    };
    const asAlice = as(alice);
    const asBob = as(bob);
    const asRoot = as(token);
    const idsOf = (data: { memories: { id: string }[] }) => data.memories.map((memory) => memory.id);

    it("hides one owner's memories from another in recall, search, get, history and forget (404, not 403)", async () => {
      const stored = await asAlice('remember', {
        memories: [{ content: 'The user is allergic to penicillin.', kind: 'fact', key: 'user.allergy' }, { content: 'The user banks with Triodos.' }],
      });
      assert.equal(stored.status, 200);
      const [allergy, bank] = idsOf(stored.data);
      const moved = await asAlice('remember', { memories: [{ content: 'The user is allergic to pollen.', key: 'user.allergy' }] });
      const [pollen] = idsOf(moved.data);

      assert.equal(idsOf((await asAlice('recall', { query: 'what is the user allergic to?' })).data)[0], pollen);
      assert.deepEqual(idsOf((await asBob('recall', { query: 'what is the user allergic to?' })).data), []);
      assert.deepEqual(idsOf((await asBob('search', { include_superseded: true, include_forgotten: true })).data), [], 'a listing shows nothing of Alice');
      assert.deepEqual(idsOf((await asBob('search', { query: 'penicillin Triodos', include_superseded: true })).data), []);
      assert.deepEqual(idsOf((await asRoot('search', { query: 'penicillin Triodos', include_superseded: true })).data), [], 'nor does the root token');
      for (const id of [allergy, bank, pollen]) {
        for (const [tool, args] of [
          ['get', { id }],
          ['history', { id }],
          ['forget', { id }],
          ['forget', { id, hard: true }],
        ] as const) {
          const answer = await asBob(tool, args);
          assert.equal(answer.status, 404, `${tool} ${JSON.stringify(args)}`);
          assert.equal(answer.json.error.code, 'not_found');
          assert.equal(answer.json.error.message, `memory ${id} not found`, 'the same answer as an id nobody holds');
        }
        const rest = await server.http('GET', `/v1/memories/${id}`, { bearer: bob });
        assert.equal(rest.status, 404);
        assert.equal((await server.http('DELETE', `/v1/memories/${id}?hard=true`, { bearer: bob })).status, 404);
      }
      const kept = await asAlice('get', { id: bank });
      assert.equal(kept.data.status, 'valid', "Bob's forget changed nothing");
      assert.equal(kept.data.content, 'The user banks with Triodos.');
      assert.deepEqual(
        (await asAlice('history', { id: allergy })).data.chain.map((entry: { id: string }) => entry.id),
        [allergy, pollen],
      );
    });

    it('refuses to supersede another owner’s memory as if it did not exist', async () => {
      const [mine] = idsOf((await asAlice('remember', { memories: [{ content: 'The user’s gym is on Rua Augusta.' }] })).data);
      const answer = await asBob('remember', { memories: [{ content: 'The user changed gyms.', supersedes: [mine] }] });
      assert.equal(answer.status, 404);
      assert.equal(answer.json.error.message, `memories[0].supersedes: memory ${mine} not found`);
      assert.equal((await asAlice('get', { id: mine })).data.status, 'valid');
    });

    it('keeps duplicates and keys per owner', async () => {
      const same = { memories: [{ content: 'The user’s favourite colour is teal.', key: 'user.colour' }] };
      const first = await asAlice('remember', same);
      const second = await asBob('remember', same);
      const third = await asRoot('remember', same);
      for (const answer of [first, second, third]) assert.equal(answer.data.memories[0].status, 'created');
      assert.equal(new Set([first, second, third].map((answer) => answer.data.memories[0].id)).size, 3);
      assert.deepEqual(second.data.memories[0].superseded, [], "Bob's key does not replace Alice's");
      const again = await asBob('remember', { memories: [{ content: 'the users favourite colour: TEAL!' }] });
      assert.equal(again.data.memories[0].status, 'duplicate');
      assert.equal(again.data.memories[0].id, second.data.memories[0].id, "Bob's own copy, not Alice's");
      assert.equal((await asAlice('get', { id: first.data.memories[0].id })).data.status, 'valid');
    });

    it("refuses one owner's search cursor to another", async () => {
      await asAlice('remember', { memories: [{ content: 'The user runs on Mondays.' }, { content: 'The user runs on Fridays.' }] });
      const page = await asAlice('search', { query: 'runs', limit: 1 });
      assert.equal(typeof page.data.next_cursor, 'string');
      const replayed = await asBob('search', { query: 'runs', limit: 1, cursor: page.data.next_cursor });
      assert.equal(replayed.status, 400);
      assert.equal(replayed.json.error.field, 'cursor');
    });

    it("weighs words by the owner's own memories only: another owner's writes neither move scores nor offer spellings", async () => {
      await asBob('remember', { memories: [{ content: 'The user walks the dog at dawn.' }, { content: 'The user feeds the dog twice a day.' }] });
      const score = async () => (await asBob('search', { query: 'dog walks' })).data.memories.map((memory: { score: number }) => memory.score);
      const before = await score();
      await asAlice('remember', { memories: Array.from({ length: 30 }, (_, index) => ({ content: `The user walks route ${index} with the dog.` })) });
      assert.deepEqual(await score(), before, "Alice's thirty dog walks leave Bob's weights alone");
      await asAlice('remember', { memories: [{ content: 'The user collects harpsichords.' }] });
      const near = await asBob('recall', { query: 'harpsichrds' });
      assert.deepEqual(near.data.memories, []);
      const page = await asBob('search', { query: 'harpsichrds dog', limit: 1 });
      const cursor = JSON.parse(Buffer.from(page.data.next_cursor, 'base64url').toString('utf8'));
      assert.deepEqual(
        cursor.ranked.plan.terms.map((term: { lexeme: string }) => term.lexeme),
        ['dog'],
        "the cursor Bob holds names no stem of Alice's as a near spelling",
      );
    });

    it('answers 401 to forged, tampered and foreign tokens, on the JSON routes and on /mcp', async () => {
      const mac = alice.slice(alice.lastIndexOf('.') + 1);
      const flipped = `${mac.slice(0, 10)}${mac[10] === 'A' ? 'B' : 'A'}${mac.slice(11)}`;
      const forged = [
        `mem1.user.bob.${mac}`,
        alice.replace('0190a1b2', '0190a1b3'),
        `${alice.slice(0, alice.lastIndexOf('.'))}.${flipped}`,
        new OwnerTokens('another-root-token', memoryOwnerTokens).mint('user.bob'),
        new OwnerTokens(token, { prefix: 'mem1', info: 'platform-scheduler-owner-token-v1' }).mint('user.bob'),
        'mem1.user.bob',
        `${token}x`,
      ];
      for (const bearer of forged) {
        const answer = await server.call('search', {}, { bearer });
        assert.equal(answer.status, 401, bearer);
        assert.equal(answer.json.error.code, 'unauthorized');
        assert.equal((await server.http('POST', '/mcp', { bearer, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).status, 401);
      }
      await assert.rejects(() => server.mcp(forged[0] as string), /401|unauthorized/i);
    });

    it("scopes the MCP route by the bearer's owner the same way", async () => {
      const client = await server.mcp(bob);
      const stored = (await client.callTool({
        name: 'remember',
        arguments: { memories: [{ content: 'The user plays the cello on Sundays.' }] },
      })) as ToolResult;
      const [cello] = idsOf(stored.structuredContent);
      assert.equal((await asBob('get', { id: cello })).status, 200, "what Bob stored over MCP is Bob's on the JSON route");
      assert.equal((await asAlice('get', { id: cello })).status, 404);
      const aliceClient = await server.mcp(alice);
      const refused = (await aliceClient.callTool({ name: 'get', arguments: { id: cello } })) as ToolResult;
      assert.equal(refused.isError, true);
      assert.equal(refused.content[0]?.text, `not_found: memory ${cello} not found`);
      const recalled = (await aliceClient.callTool({ name: 'recall', arguments: { query: 'cello Sundays' } })) as ToolResult;
      assert.deepEqual(recalled.structuredContent.memories, []);
    });
  });
}

for (const engine of testEngines()) {
  describe(`the owners migration on ${engine.name}`, () => {
    it('gives memories stored before owners to the root token: its own again, invisible to every user token', async () => {
      const fresh = await freshDatabase(engine);
      try {
        await migrate(fresh.database, serviceName, { '0001_memories': migrations['0001_memories'] as Migration });
        const content = 'The user was born in Coimbra.';
        const id = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
        await sql`
          insert into memories (id, scope, content, kind, importance, created_at, fingerprint, search_vector, token_estimate)
          values (${id}, 'default', ${content}, 'fact', 0.5, ${startTime}, memory_fingerprint('english'::regconfig, ${content}),
                  ${searchVectorSql('english', sql`${content}`, sql`'{}'::text[]`, sql`null::text`)}, 8)`.execute(fresh.database.db);
        const server = await startMemory(fresh.database);
        try {
          const asRoot = (await server.call('get', { id })).json.data;
          assert.deepEqual([asRoot.content, asRoot.status], [content, 'valid']);
          assert.equal((await server.call('get', { id }, { bearer: alice })).status, 404);
          const again = await server.ok('remember', { memories: [{ content }] });
          assert.deepEqual(again.memories[0], { id, status: 'duplicate', superseded: [] }, 'the root owner’s duplicate index holds the old row');
          assert.equal((await server.ok('recall', { query: 'where was the user born?' })).memories[0].id, id, 'its words count for the root owner');
          const mine = await server.call('remember', { memories: [{ content }] }, { bearer: alice });
          assert.equal(mine.json.data.memories[0].status, 'created', 'a user stores the same words as a memory of their own');
        } finally {
          await server.close();
        }
      } finally {
        await fresh.database.close();
        await fresh.dispose();
      }
    });
  });
}
