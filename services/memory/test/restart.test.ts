import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '@platform/kit/db/open-database';
import { testEngines } from '@platform/testkit/databases';
import type { MemorySchema } from '../src/db/schema.ts';
import { freshDatabase, type MemoryServer, startMemory } from './harness.ts';

const minute = 60_000;
const day = 86_400_000;

for (const engine of testEngines()) {
  describe(`restarting the memory server on ${engine.name}`, () => {
    let fresh: Awaited<ReturnType<typeof freshDatabase>>;
    let database: Database<MemorySchema>;
    let server: MemoryServer;
    before(async () => {
      fresh = await freshDatabase(engine);
      database = fresh.database;
      server = await startMemory(database);
    });
    after(async () => {
      await server.close();
      await database.close();
      await fresh.dispose();
    });

    it('answers get, search, recall and history exactly as before, and keeps detecting duplicates and weighing words', async () => {
      const scope = 'restart';
      const { clock } = server;
      const [lisbon, seats, zanzibar, maria, coffee, pin, gym] = await server.remember(
        [
          { content: 'The user lives in Lisbon.', kind: 'fact', tags: ['home'], key: 'user.home_city' },
          { content: 'The user prefers window seats on long flights.', kind: 'preference', tags: ['travel'], importance: 0.8 },
          { content: 'The user honeymooned in Zanzibar in 2019.', kind: 'event', tags: ['travel', 'family'] },
          { content: "The user's sister Maria is allergic to peanuts.", kind: 'fact', tags: ['family', 'health'], importance: 0.9 },
          { content: 'The user drinks coffee every morning.', kind: 'preference' },
          { content: "The user's old bank PIN hint is the year of the coffee machine.", kind: 'note', source: { conversation_id: 'conv-7' } },
          { content: "The user's gym membership ends in March.", kind: 'fact', tags: ['health'] },
        ],
        scope,
      );
      clock.advance(minute);
      const [porto] = await server.remember([{ content: 'The user moved to Porto.', kind: 'fact', tags: ['home'], key: 'user.home_city' }], scope);
      clock.advance(minute);
      const [extended] = await server.remember([{ content: "The user's gym membership was extended to June.", kind: 'fact', supersedes: [gym] }], scope);
      clock.advance(minute);
      const [decaf, roast] = await server.remember(['The user switched to decaf coffee in the afternoon.', 'The user roasts coffee beans at home.'], scope);
      await server.ok('forget', { id: coffee, reason: 'the user asked to forget it' });
      await server.ok('forget', { id: pin, hard: true });
      clock.advance(3 * day);
      const ids = [lisbon, seats, zanzibar, maria, coffee, pin, gym, porto, extended, decaf, roast] as string[];

      const firstPage = await server.ok('search', { scope, query: 'user coffee home', limit: 2 });
      assert.ok(firstPage.next_cursor, 'there is a second page');

      /** Every read a caller could make, as it answers now (status and body). */
      const answers = async () => {
        const reads: [string, unknown][] = [];
        const read = async (name: string, tool: string, args: unknown) => {
          const answer = await server.call(tool, args);
          reads.push([name, { status: answer.status, body: answer.json }]);
        };
        for (const id of ids) {
          await read(`get ${id}`, 'get', { id });
          await read(`history ${id}`, 'history', { id });
        }
        await read('newest first', 'search', { scope, limit: 100 });
        await read('everything', 'search', { scope, include_superseded: true, include_forgotten: true, limit: 100 });
        await read('by tag', 'search', { scope, tags: ['health'] });
        await read('by keywords', 'search', { scope, query: 'user coffee home', limit: 2 });
        await read('second page', 'search', { scope, query: 'user coffee home', limit: 2, cursor: firstPage.next_cursor });
        await read('misspelt', 'search', { scope, query: 'zanzibr honeymoon' });
        for (const query of ['which city is home?', 'peanut allergy in the family', 'coffee Zanzibar', 'gym membership', 'flights'])
          await read(`recall ${query}`, 'recall', { scope, query });
        await read('recall a conversation', 'recall', {
          scope,
          messages: [
            { role: 'user', content: 'Book me a flight to the coast.' },
            { role: 'assistant', content: 'Sure, which seat do you like?' },
            { role: 'user', content: 'You know what I like on long flights.' },
          ],
        });
        return reads;
      };
      const statistics = async () => {
        const lexicon = await server.lexicon();
        return {
          documents: lexicon.documentCount,
          averageLength: lexicon.averageLength,
          zanzibar: lexicon.documentFrequency('zanzibar'),
          coffee: lexicon.documentFrequency('coffe'),
        };
      };

      const beforeRestart = await answers();
      const statisticsBefore = await statistics();
      assert.deepEqual(statisticsBefore.zanzibar, 1);
      assert.ok(statisticsBefore.coffee >= 3);

      await server.close();
      await database.close();
      database = await fresh.reopen();
      server = await startMemory(database, { clock });

      assert.deepEqual(await answers(), beforeRestart);
      assert.deepEqual(await statistics(), statisticsBefore, 'the term statistics were loaded from the stored memories');
      // A sanity check that the comparison compares something: the answers hold the memories and their scores.
      const recalled = beforeRestart.find(([name]) => name === 'recall coffee Zanzibar')?.[1] as { body: { data: { memories: { id: string }[] } } };
      // The rare word outweighs the common one: the honeymoon comes before the memories about coffee.
      assert.equal(recalled.body.data.memories[0]?.id, zanzibar);
      assert.ok(recalled.body.data.memories.length >= 3);
      const where = await server.ok('recall', { scope, query: 'which city is home?' });
      assert.equal(where.memories[0].id, porto);
      assert.ok(!where.memories.some((memory: { id: string }) => memory.id === lisbon), 'the superseded city stays superseded');

      // Duplicates of memories stored before the restart are still recognised, exactly or nearly.
      const again = await server.ok('remember', {
        scope,
        memories: [
          { content: 'The user honeymooned in Zanzibar in 2019.' },
          { content: 'User honeymooned in Zanzibar, 2019!' },
          { content: 'The user moved to Porto.', key: 'user.home_city' },
          { content: 'The user drinks coffee every morning.' },
        ],
      });
      assert.deepEqual(
        again.memories.map((memory: { id: string; status: string }) => [memory.id, memory.status]),
        [
          [zanzibar, 'duplicate'],
          [zanzibar, 'duplicate'],
          [porto, 'duplicate'],
          [again.memories[3].id, 'created'],
        ],
      );
      assert.notEqual(again.memories[3].id, coffee, 'a forgotten memory is not a duplicate: it is stored anew');

      // Supersession chains continue across the restart.
      const [braga] = await server.remember([{ content: 'The user moved to Braga.', kind: 'fact', key: 'user.home_city' }], scope);
      const history = await server.ok('history', { id: lisbon });
      assert.deepEqual(
        history.chain.map((entry: { id: string }) => entry.id),
        [lisbon, porto, braga],
      );
      assert.equal(history.current, braga);
      assert.equal((await server.lexicon()).documentCount, statisticsBefore.documents + 2, 'new memories count on top of the reloaded ones');
    });
  });
}
