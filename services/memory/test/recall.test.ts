import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { type MemoryServer, startOnFreshDatabase } from './harness.ts';

const dayMs = 86_400_000;
const ids = (data: { memories: { id: string }[] }) => data.memories.map((memory) => memory.id);

for (const engine of testEngines()) {
  describe(`recall on ${engine.name}`, () => {
    let server: MemoryServer;
    let dispose: () => Promise<void>;
    const at: Record<string, string> = {};
    before(async () => {
      ({ server, dispose } = await startOnFreshDatabase(engine));
      const remember = async (name: string, memory: Record<string, unknown>, scope = 'default') => {
        [at[name]] = (await server.remember([memory], scope)) as [string];
      };
      await remember('peanuts', {
        content: 'Maria (the user’s sister) has a severe peanut allergy and carries an EpiPen.',
        kind: 'fact',
        tags: ['family', 'health'],
      });
      await remember('restaurant', { content: 'The user’s favourite restaurant in Lisbon is Taberna da Rua das Flores.', kind: 'preference', tags: ['food'] });
      await remember('booking', { content: 'When booking flights, always choose an aisle seat near the front.', kind: 'procedure', tags: ['travel'] });
      await remember('birthday', { content: 'Jordan’s birthday is on April 8; he likes fountain pens.', kind: 'event', tags: ['family'] });
      server.clock.advance(200 * dayMs);
      await remember('standupOld', { content: 'The Data Platform standup is daily at 10:15.', kind: 'event', tags: ['work'], importance: 0.2 });
      await remember('standupNew', {
        content: 'The Data Platform standup happens daily at 9:45 in room Kepler.',
        kind: 'event',
        tags: ['work'],
        importance: 0.9,
      });
      await remember('atlas', { content: 'Atlas exports time out for ranges over 90 days.', kind: 'note' }, 'project-atlas');
    });
    after(() => dispose());

    it('finds a memory by its distinctive words and says which matched', async () => {
      const data = await server.ok('recall', { query: 'peanut allergy' });
      assert.equal(data.memories[0].id, at.peanuts);
      assert.deepEqual(data.memories[0].why.matched_words.sort(), ['allergy', 'peanut']);
      assert.equal(data.memories[0].why.keyword_rank, 1);
      assert.equal(data.memories[0].why.semantic_rank, null);
      assert.match(data.memories[0].why.summary, /matches "peanut", "allergy"|matches "allergy", "peanut"/);
      assert.deepEqual(data.channels, ['keyword']);
      assert.ok(data.memories[0].score > 0);
    });

    it('matches other forms of a word (stems) and near spellings', async () => {
      assert.equal((await server.ok('recall', { query: 'flight bookings' })).memories[0].id, at.booking);
      assert.equal((await server.ok('recall', { query: 'who is allergic to peanuts?' })).memories[0].id, at.peanuts);
      const typo = await server.ok('recall', { query: 'favorite restuarant' });
      assert.equal(typo.memories[0].id, at.restaurant);
      assert.deepEqual(typo.memories[0].why.near_spellings.map((near: { word: string }) => near.word).sort(), ['favorite', 'restuarant']);
      const birthday = await server.ok('recall', { query: 'Jordan birthdya' });
      assert.equal(birthday.memories[0].id, at.birthday);
    });

    it('reads the conversation when given messages, the latest turn weighing most', async () => {
      const data = await server.ok('recall', {
        messages: [
          { role: 'user', content: 'Can you book me a table somewhere nice in Lisbon?' },
          { role: 'assistant', content: 'Sure, any preference?' },
          { role: 'user', content: 'Actually first: what should I get Jordan for his birthday?' },
        ],
      });
      assert.equal(data.memories[0].id, at.birthday);
      assert.ok(ids(data).includes(at.restaurant as string), 'the earlier turn still counts');
    });

    it('applies kind, tag and time filters and keeps scopes apart', async () => {
      const family = await server.ok('recall', { query: 'birthday allergy', tags: ['family'] });
      assert.deepEqual(ids(family).sort(), [at.birthday, at.peanuts].sort());
      const events = await server.ok('recall', { query: 'birthday allergy', kinds: ['event'] });
      assert.deepEqual(ids(events), [at.birthday]);
      const recent = await server.ok('recall', { query: 'standup birthday', created_after: new Date(server.clock.now().getTime() - dayMs).toISOString() });
      assert.ok(!ids(recent).includes(at.birthday as string));
      const older = await server.ok('recall', { query: 'standup birthday', created_before: new Date(server.clock.now().getTime() - dayMs).toISOString() });
      assert.deepEqual(ids(older), [at.birthday]);
      assert.deepEqual(ids(await server.ok('recall', { query: 'exports time out' })), []);
      assert.deepEqual(ids(await server.ok('recall', { scope: 'project-atlas', query: 'exports time out' })), [at.atlas]);
      const backwards = await server.call('recall', { query: 'x', created_after: '2026-02-01T00:00:00Z', created_before: '2026-01-01T00:00:00Z' });
      assert.equal(backwards.status, 400);
      assert.equal(backwards.json.error.message, 'created_after must be before created_before');
    });

    it('lets importance and recency order memories that match equally', async () => {
      const data = await server.ok('recall', { query: 'Data Platform standup daily' });
      assert.deepEqual(ids(data).slice(0, 2), [at.standupNew, at.standupOld]);
      assert.ok(data.memories[0].why.importance > data.memories[1].why.importance);
    });

    it('packs memories into the token budget and the limit, saying how many were left out', async () => {
      const all = await server.ok('recall', { query: 'standup birthday peanut restaurant flights', max_tokens: 32_000 });
      assert.ok(all.memories.length >= 4);
      const first = all.memories[0];
      const firstCost =
        all.tokens_used - all.memories.slice(1).reduce((sum: number, memory: { content: string }) => sum + Math.ceil(memory.content.length / 4) + 12, 0);
      const tight = await server.ok('recall', { query: 'standup birthday peanut restaurant flights', max_tokens: firstCost });
      assert.deepEqual(ids(tight), [first.id]);
      assert.equal(tight.tokens_used, firstCost);
      assert.equal(tight.omitted, all.memories.length - 1);
      const none = await server.ok('recall', { query: 'standup birthday peanut restaurant flights', max_tokens: 1 });
      assert.deepEqual(none.memories, []);
      const limited = await server.ok('recall', { query: 'standup birthday peanut restaurant flights', limit: 2 });
      assert.equal(limited.memories.length, 2);
      assert.equal(limited.omitted, all.memories.length - 2);
    });

    it('answers a query with no known word with nothing rather than an error', async () => {
      const data = await server.ok('recall', { query: 'xylophone zeppelin' });
      assert.deepEqual(data.memories, []);
      assert.equal(data.tokens_used, 0);
      const stopWords = await server.ok('recall', { query: 'what is it?' });
      assert.deepEqual(stopWords.memories, []);
    });
  });
}
