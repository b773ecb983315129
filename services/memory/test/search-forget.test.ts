import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import { type MemoryServer, startOnFreshDatabase } from './harness.ts';

const ids = (data: { memories: { id: string }[] }) => data.memories.map((memory) => memory.id);

for (const engine of testEngines()) {
  describe(`search, forget and history on ${engine.name}`, () => {
    let server: MemoryServer;
    let dispose: () => Promise<void>;
    let garden: string[];
    before(async () => {
      ({ server, dispose } = await startOnFreshDatabase(engine));
      garden = [];
      for (let index = 0; index < 25; index++) {
        server.clock.advance(60_000);
        garden.push(
          ...(await server.remember([
            { content: `Garden note ${index}: water the tomato bed ${index % 2 === 0 ? 'twice' : 'once'} on day ${index}.`, tags: ['garden'] },
          ])),
        );
      }
    });
    after(() => dispose());

    async function allPages(args: Record<string, unknown>) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const data = await server.ok('search', { ...args, ...(cursor ? { cursor } : {}) });
        seen.push(...ids(data));
        cursor = data.next_cursor ?? undefined;
        pages++;
      } while (cursor);
      return { seen, pages };
    }

    it('pages through keyword results with a cursor, each memory once, best first', async () => {
      const { seen, pages } = await allPages({ query: 'tomato bed', limit: 10 });
      assert.equal(pages, 3);
      assert.equal(seen.length, 25);
      assert.equal(new Set(seen).size, 25);
      const first = await server.ok('search', { query: 'tomato twice', limit: 5 });
      const scores = first.memories.map((memory: { score: number }) => memory.score);
      assert.deepEqual(
        [...scores].sort((a, b) => b - a),
        scores,
      );
      assert.ok(first.memories[0].matched_words.includes('twice'));
    });

    it('lists newest first without a query, with filters, across pages', async () => {
      const { seen } = await allPages({ tags: ['garden'], limit: 7 });
      assert.deepEqual(seen, [...garden].reverse());
      const page = await server.ok('search', { limit: 3 });
      assert.equal(page.memories[0].score, null);
    });

    it('keeps a cursor consistent while memories are added between pages', async () => {
      const first = await server.ok('search', { query: 'tomato bed', limit: 10 });
      await server.remember(['Tomato bed needs a new trellis.']);
      const second = await server.ok('search', { query: 'tomato bed', limit: 10, cursor: first.next_cursor });
      assert.equal(ids(first).filter((id: string) => ids(second).includes(id)).length, 0, 'no memory on two pages');
    });

    it('refuses a cursor from another search or a garbled one', async () => {
      const first = await server.ok('search', { query: 'tomato', limit: 2 });
      for (const args of [
        { query: 'tomato', limit: 2, tags: ['garden'], cursor: first.next_cursor },
        { query: 'trellis', limit: 2, cursor: first.next_cursor },
        { limit: 2, cursor: first.next_cursor },
        { query: 'tomato', limit: 2, cursor: 'not-a-cursor' },
        { query: 'tomato', limit: 2, cursor: Buffer.from('{"v":1,"filters":"x","ranked":{}}').toString('base64url') },
      ]) {
        const answer = await server.call('search', args);
        assert.equal(answer.status, 400, JSON.stringify(args));
        assert.equal(answer.json.error.field, 'cursor');
      }
    });

    it('forgets softly: gone from recall and search, visible with include_forgotten, get and history', async () => {
      const [id] = await server.remember(['The spare key is under the blue flowerpot.']);
      const forgotten = await server.ok('forget', { id, reason: 'the user moved the key' });
      assert.deepEqual(forgotten, { id, status: 'forgotten', changed: true });
      assert.deepEqual(ids(await server.ok('recall', { query: 'spare key flowerpot' })), []);
      assert.deepEqual(ids(await server.ok('search', { query: 'spare key flowerpot' })), []);
      assert.deepEqual(ids(await server.ok('search', { query: 'spare key flowerpot', include_forgotten: true })), [id]);
      const memory = await server.ok('get', { id });
      assert.equal(memory.status, 'forgotten');
      assert.equal(memory.content, 'The spare key is under the blue flowerpot.');
      assert.equal((await server.ok('forget', { id })).changed, false);
      const [again] = await server.remember(['The spare key is under the blue flowerpot.']);
      assert.notEqual(again, id, 'a forgotten memory is not a duplicate to return');
    });

    it('forgets hard: the content is really gone from the database, the chain keeps a tombstone', async () => {
      const [old] = await server.remember(['The user’s passport number is X1234567.']);
      const data = await server.ok('remember', { memories: [{ content: 'The user renewed the passport; new number Y7654321.', supersedes: [old] }] });
      const erased = await server.ok('forget', { id: old, hard: true });
      assert.deepEqual(erased, { id: old, status: 'erased', changed: true });
      const row = await server.database.db
        .selectFrom('memories')
        .selectAll()
        .where('id', '=', old as string)
        .executeTakeFirstOrThrow();
      assert.equal(row.content, null);
      assert.equal(row.search_vector, null);
      assert.equal(row.fingerprint, null);
      assert.deepEqual(row.tags, []);
      const leftovers = await sql<{
        n: number;
      }>`select count(*)::int as n from memories where content like ${'%X1234567%'} or forget_reason like ${'%X1234567%'}`.execute(server.database.db);
      assert.equal(leftovers.rows[0]?.n, 0);
      const get = await server.call('get', { id: old });
      assert.equal(get.status, 404);
      assert.match(get.json.error.message, /was erased/);
      assert.deepEqual(ids(await server.ok('search', { query: 'X1234567', include_superseded: true, include_forgotten: true })), []);
      const history = await server.ok('history', { id: data.memories[0].id });
      assert.deepEqual(
        history.chain.map((entry: { id: string; status: string; content: string | null }) => [entry.id, entry.status, entry.content]),
        [
          [old, 'erased', null],
          [data.memories[0].id, 'valid', 'The user renewed the passport; new number Y7654321.'],
        ],
      );
      assert.deepEqual(history.chain[1].supersedes, [old]);
      assert.equal((await server.ok('forget', { id: old, hard: true })).changed, false);
    });

    it('walks a longer chain from any of its links, oldest first', async () => {
      const [v1] = await server.remember([{ content: 'The 1:1 with Priya is on Tuesdays.', key: 'priya.one_on_one' }]);
      server.clock.advance(1000);
      const [v2] = await server.remember([{ content: 'The 1:1 with Priya moved to Thursdays.', key: 'priya.one_on_one' }]);
      server.clock.advance(1000);
      const [v3] = await server.remember([{ content: 'The 1:1 with Priya is now on Mondays.', key: 'priya.one_on_one' }]);
      for (const id of [v1, v2, v3]) {
        const history = await server.ok('history', { id });
        assert.deepEqual(
          history.chain.map((entry: { id: string }) => entry.id),
          [v1, v2, v3],
        );
        assert.equal(history.current, v3);
      }
      await server.ok('forget', { id: v3 });
      assert.equal((await server.ok('history', { id: v1 })).current, null, 'no current version once the newest is forgotten');
      const unknown = await server.call('history', { id: '01234567-89ab-7def-8123-456789abcdef' });
      assert.equal(unknown.status, 404);
    });

    it('answers forget of an unknown id with 404', async () => {
      const answer = await server.call('forget', { id: '01234567-89ab-7def-8123-456789abcdef' });
      assert.equal(answer.status, 404);
      assert.equal(answer.json.error.code, 'not_found');
    });
  });
}
