import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { type MemoryServer, startOnFreshDatabase } from './harness.ts';

for (const engine of testEngines()) {
  describe(`remember on ${engine.name}`, () => {
    let server: MemoryServer;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ server, dispose } = await startOnFreshDatabase(engine));
    });
    after(() => dispose());

    it('stores every field and reads it back as given', async () => {
      const data = await server.ok('remember', {
        scope: 'project-atlas',
        memories: [
          {
            content: 'Atlas staging runs at https://atlas-staging.example.internal.',
            kind: 'fact',
            tags: ['atlas', 'infra'],
            key: 'atlas.staging_url',
            importance: 0.9,
            source: { conversation_id: 'conv-17', intent_id: 'intent-4' },
          },
        ],
      });
      assert.equal(data.scope, 'project-atlas');
      const memory = await server.ok('get', { id: data.memories[0].id });
      assert.equal(memory.content, 'Atlas staging runs at https://atlas-staging.example.internal.');
      assert.equal(memory.kind, 'fact');
      assert.deepEqual(memory.tags, ['atlas', 'infra']);
      assert.equal(memory.key, 'atlas.staging_url');
      assert.equal(memory.importance, 0.9);
      assert.deepEqual(memory.source, { conversation_id: 'conv-17', intent_id: 'intent-4' });
      assert.equal(memory.created_at, server.clock.now().toISOString());
      assert.equal(memory.status, 'valid');
      assert.equal(memory.scope, 'project-atlas');
    });

    it('defaults the scope, kind and importance', async () => {
      const [id] = await server.remember(['The user waters the plants on Sundays.']);
      const memory = await server.ok('get', { id });
      assert.equal(memory.scope, 'default');
      assert.equal(memory.kind, 'note');
      assert.equal(memory.importance, 0.5);
      assert.deepEqual(memory.tags, []);
    });

    it('returns the existing id for an exact or near duplicate in the same scope, and stores it in another scope', async () => {
      const [first] = await server.remember(["The user's favourite colour is teal."]);
      const again = await server.ok('remember', {
        memories: [
          { content: "The user's favourite colour is teal." },
          { content: 'the users favourite colour:   TEAL!' },
          { content: "User's favourite colours are teal" },
        ],
      });
      for (const memory of again.memories) {
        assert.equal(memory.id, first);
        assert.equal(memory.status, 'duplicate');
      }
      const [elsewhere] = await server.remember(["The user's favourite colour is teal."], 'conv-99');
      assert.notEqual(elsewhere, first);
    });

    it('keeps statements that differ in a number, a negation or word order apart', async () => {
      const ids = await server.remember([
        'Dentist appointment on Tuesday at 3pm.',
        'Dentist appointment on Tuesday at 4pm.',
        'The user likes olives.',
        'The user does not like olives.',
        "The user doesn't like olives.",
        'Alice reports to Bob.',
        'Bob reports to Alice.',
      ]);
      assert.equal(new Set(ids).size, 6, 'only the two negations are the same statement');
      assert.equal(ids[3], ids[4]);
    });

    it('treats a duplicate inside one batch as a duplicate of the first', async () => {
      const data = await server.ok('remember', { memories: [{ content: 'Parking spot 14.' }, { content: 'Parking spot 14' }] });
      assert.equal(data.memories[0].status, 'created');
      assert.equal(data.memories[1].status, 'duplicate');
      assert.equal(data.memories[1].id, data.memories[0].id);
    });

    it('lets concurrent writers of the same memory end up with one copy', async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => server.ok('remember', { memories: [{ content: 'The Wi-Fi password is on the fridge.' }] })),
      );
      const ids = new Set(answers.map((answer) => answer.memories[0].id));
      assert.equal(ids.size, 1);
      assert.equal(answers.filter((answer) => answer.memories[0].status === 'created').length, 1);
    });

    it('supersedes named memories: they leave recall, stay in search with include_superseded and in history', async () => {
      const [old] = await server.remember([{ content: 'The user drives a blue Volvo.', kind: 'fact' }]);
      server.clock.advance(60_000);
      const data = await server.ok('remember', { memories: [{ content: 'The user sold the Volvo and now drives a green Tesla.', supersedes: [old] }] });
      const newer = data.memories[0];
      assert.deepEqual(newer.superseded, [old]);
      const replaced = await server.ok('get', { id: old });
      assert.equal(replaced.status, 'superseded');
      assert.equal(replaced.superseded_by, newer.id);
      assert.equal(replaced.invalidated_at, server.clock.now().toISOString());
      const recalled = await server.ok('recall', { query: 'what car does the user drive? Volvo' });
      const ids = recalled.memories.map((memory: { id: string }) => memory.id);
      assert.equal(ids[0], newer.id);
      assert.ok(!ids.includes(old), 'the superseded memory is not recalled');
      const all = await server.ok('search', { query: 'Volvo', include_superseded: true });
      assert.deepEqual(all.memories.map((memory: { id: string }) => memory.id).sort(), [old, newer.id].sort());
    });

    it('supersedes the current holder of a key, and a same-key duplicate changes nothing', async () => {
      const [lisbon] = await server.remember([{ content: 'The user lives in Lisbon.', key: 'user.home_city' }]);
      const moved = await server.ok('remember', { memories: [{ content: 'The user lives in Porto.', key: 'user.home_city' }] });
      assert.deepEqual(moved.memories[0].superseded, [lisbon]);
      const same = await server.ok('remember', { memories: [{ content: 'The user lives in Porto', key: 'user.home_city' }] });
      assert.equal(same.memories[0].status, 'duplicate');
      assert.equal(same.memories[0].id, moved.memories[0].id);
      assert.deepEqual(same.memories[0].superseded, []);
      assert.equal((await server.ok('get', { id: moved.memories[0].id })).status, 'valid');
    });

    it('points what a duplicate supersedes at the copy already held', async () => {
      const [kept, old] = await server.remember(['The team standup is at 9:30.', 'The team standup is at 9:15.']);
      const data = await server.ok('remember', { memories: [{ content: 'The team standup is at 9:30', supersedes: [old] }] });
      assert.equal(data.memories[0].id, kept);
      assert.equal(data.memories[0].status, 'duplicate');
      assert.equal((await server.ok('get', { id: old })).superseded_by, kept);
      const history = await server.ok('history', { id: old });
      assert.equal(history.current, kept);
    });

    it('refuses to supersede what is unknown, in another scope, forgotten or already superseded, and stores nothing of the batch', async () => {
      const [a, b] = await server.remember(['Gym membership renews in May.', 'Gym membership renews in June.']);
      const [foreign] = await server.remember(['Gym locker number 12.'], 'elsewhere');
      const [gone] = await server.remember(['Gym closes at 10pm.']);
      await server.ok('forget', { id: gone });
      await server.ok('remember', { memories: [{ content: 'Gym membership renews in July.', supersedes: [a] }] });
      const cases: [string[], number, string, RegExp][] = [
        [['01234567-89ab-7def-8123-456789abcdef'], 404, 'not_found', /memories\[1\]\.supersedes: memory 01234567-89ab-7def-8123-456789abcdef not found/],
        [[foreign as string], 400, 'invalid_request', /is in scope "elsewhere", not "default"/],
        [[gone as string], 409, 'conflict', /was forgotten/],
        [[a as string], 409, 'conflict', /already superseded by/],
      ];
      for (const [supersedes, status, code, message] of cases) {
        const answer = await server.call('remember', {
          memories: [{ content: 'Batch companion that must not be stored (unique words: zephyr quokka).' }, { content: 'Gym update.', supersedes }],
        });
        assert.equal(answer.status, status);
        assert.equal(answer.json.error.code, code);
        assert.match(answer.json.error.message, message);
        assert.equal((await server.ok('search', { query: 'zephyr quokka' })).memories.length, 0, 'the batch left nothing behind');
      }
      assert.equal((await server.ok('get', { id: b })).status, 'valid');
    });

    it('refuses blank content (after trimming) naming the memory', async () => {
      const answer = await server.call('remember', { memories: [{ content: 'fine' }, { content: '   \n ' }] });
      assert.equal(answer.status, 400);
      assert.equal(answer.json.error.message, 'memories[1].content is blank');
    });
  });
}
