import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { limits } from '../src/limits.ts';
import { type MemoryServer, startOnFreshDatabase } from './harness.ts';

/** Text of exactly `length` characters made of words no other memory of the file holds (so it is never a duplicate). */
function textOf(length: number, seed: string): string {
  const words: string[] = [];
  let size = 0;
  for (let index = 0; size <= length; index++) {
    const word = `${seed}${index.toString(36)}`;
    words.push(word);
    size += word.length + 1;
  }
  return words.join(' ').slice(0, length).replace(/ $/, 'x');
}

const missingId = '01234567-89ab-7def-8123-456789abcdef';

for (const engine of testEngines()) {
  describe(`limits of the JSON routes on ${engine.name}`, () => {
    let server: MemoryServer;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ server, dispose } = await startOnFreshDatabase(engine));
    });
    after(() => dispose());

    // biome-ignore lint/suspicious/noExplicitAny: the data of whichever tool was called.
    async function accepted(tool: string, args: unknown): Promise<any> {
      const answer = await server.call(tool, args);
      assert.equal(answer.status, 200, `${tool} should be accepted: ${answer.text.slice(0, 300)}`);
      assert.equal(answer.json.ok, true);
      return answer.json.data;
    }

    /** Asserts the call is refused with this status, code and field; returns the error. */
    async function refused(tool: string, args: unknown, field: string | undefined, status = 400, code = 'invalid_request') {
      const answer = await server.call(tool, args);
      assert.equal(answer.status, status, `${tool} should be refused with ${status}: ${answer.text.slice(0, 300)}`);
      assert.equal(answer.json.ok, false);
      assert.equal(answer.json.error.code, code);
      assert.equal(answer.json.error.retryable, false, 'a refused argument is not worth retrying');
      if (field !== undefined) assert.equal(answer.json.error.field, field, answer.json.error.message);
      assert.ok(answer.json.error.message.length > 0);
      return answer.json.error as { message: string; field?: string };
    }

    const one = (memory: Record<string, unknown>, scope = 'limits') => ({ scope, memories: [memory] });

    // The per-field limits do not depend on the database engine: PGlite covers them; the atomic batch runs on both.
    if (engine.name === 'pglite') {
      it(`takes content of ${limits.contentChars} characters whole and refuses one more`, async () => {
        const content = textOf(limits.contentChars, 'cont');
        const [stored] = (await accepted('remember', one({ content }))).memories;
        assert.equal((await accepted('get', { id: stored.id })).content, content, 'stored whole');
        const error = await refused('remember', one({ content: textOf(limits.contentChars + 1, 'over') }), 'memories[0].content');
        assert.match(error.message, /memories\[0\]\.content must NOT have more than 8000 characters/);
        await refused(
          'remember',
          { scope: 'limits', memories: [{ content: 'fine' }, { content: textOf(limits.contentChars + 1, 'second') }] },
          'memories[1].content',
        );
        await refused('remember', one({ content: '' }), 'memories[0].content');
        await refused('remember', one({ content: '   \n ' }), 'memories[0].content');
      });

      it('refuses a NUL character as a bad argument (400), not a database failure', async () => {
        await refused('remember', one({ content: 'before\u0000after' }), 'memories[0].content');
        await refused('remember', one({ content: 'tagged', tags: ['a\u0000b'] }), 'memories[0].tags[0]');
        await refused('remember', one({ content: 'keyed', key: 'user\u0000key' }), 'memories[0].key');
        await refused('recall', { query: 'what\u0000now' }, 'query');
        await refused('recall', { messages: [{ role: 'user', content: 'hi\u0000' }] }, 'messages[0].content');
        await refused('search', { query: '\u0000' }, 'query');
        const raw = await server.http('POST', '/v1/remember', { body: '{"memories":[{"content":"raw \\u0000 escape"}]}' });
        assert.equal(raw.status, 400);
        assert.equal(raw.json.error.field, 'memories[0].content');
      });

      it('refuses an instant PostgreSQL cannot hold (year 0) as a bad argument, not a database failure', async () => {
        await refused('search', { query: 'x', created_after: '0000-01-01T00:00:00Z' }, 'created_after');
        await refused('search', { query: 'x', created_before: '0000-12-31T23:59:59Z' }, 'created_before');
        await accepted('search', { query: 'x', created_after: '0001-01-01T00:00:00Z' });
      });

      it(`takes ${limits.tagsPerMemory} tags of ${limits.tagChars} characters and refuses a tag more or a character more`, async () => {
        const tags = Array.from({ length: limits.tagsPerMemory }, (_, index) => `t${index}-${'x'.repeat(limits.tagChars - 3 - String(index).length)}`);
        assert.ok(tags.every((tag) => tag.length === limits.tagChars - 1));
        tags[0] = 'y'.repeat(limits.tagChars);
        const [stored] = (await accepted('remember', one({ content: 'The user collects vintage fountain pens.', tags }))).memories;
        assert.deepEqual((await accepted('get', { id: stored.id })).tags, tags);
        await refused('remember', one({ content: 'too many tags', tags: [...tags, 'extra'] }), 'memories[0].tags');
        await refused('remember', one({ content: 'long tag', tags: ['z'.repeat(limits.tagChars + 1)] }), 'memories[0].tags[0]');
        await refused('remember', one({ content: 'empty tag', tags: [''] }), 'memories[0].tags[0]');
        await refused('remember', one({ content: 'two-line tag', tags: ['a\nb'] }), 'memories[0].tags[0]');
        // As a filter the same limits hold.
        await accepted('search', { scope: 'limits', tags });
        await refused('search', { scope: 'limits', tags: [...tags, 'extra'] }, 'tags');
        await refused('recall', { query: 'pens', tags: ['q'.repeat(limits.tagChars + 1)] }, 'tags[0]');
      });

      it(`takes a key of ${limits.keyChars} and source ids of ${limits.sourceIdChars} characters and refuses one more`, async () => {
        const key = `k${'e'.repeat(limits.keyChars - 1)}`;
        const source = { conversation_id: 'c'.repeat(limits.sourceIdChars), intent_id: 'i'.repeat(limits.sourceIdChars) };
        const [stored] = (await accepted('remember', one({ content: 'The user sleeps with the window open.', key, source }))).memories;
        const got = await accepted('get', { id: stored.id });
        assert.equal(got.key, key);
        assert.deepEqual(got.source, source);
        await refused('remember', one({ content: 'long key', key: `${key}y` }), 'memories[0].key');
        await refused('remember', one({ content: 'key on two lines', key: 'user.\nname' }), 'memories[0].key');
        await refused(
          'remember',
          one({ content: 'long conversation', source: { conversation_id: 'c'.repeat(limits.sourceIdChars + 1) } }),
          'memories[0].source.conversation_id',
        );
        await refused('remember', one({ content: 'long intent', source: { intent_id: 'i'.repeat(limits.sourceIdChars + 1) } }), 'memories[0].source.intent_id');
      });

      it(`takes a scope of ${limits.scopeChars} characters and refuses one more or a character outside the allowed set`, async () => {
        const scope = `s${'c:o/p.e_@-'.repeat(20)}`.slice(0, limits.scopeChars);
        assert.equal(scope.length, limits.scopeChars);
        const stored = await accepted('remember', one({ content: 'The user is in the long scope.' }, scope));
        assert.equal(stored.scope, scope);
        assert.equal((await accepted('search', { scope })).memories.length, 1);
        await refused('remember', one({ content: 'too long a scope' }, `${scope}x`), 'scope');
        await refused('recall', { scope: `${scope}x`, query: 'scope' }, 'scope');
        for (const bad of ['bad scope', '-leading-dash', 'a#b', 'café', 'tab\tscope', '']) {
          const error = await refused('remember', one({ content: 'bad scope' }, bad), 'scope');
          if (bad !== '') assert.match(error.message, /scope has characters that are not allowed/);
        }
        assert.equal((await accepted('search', { scope: 'a' })).memories.length, 0, 'a one-character scope is fine');
      });

      it(`stores a batch of ${limits.batchSize} memories of ${limits.contentChars} four-byte characters within the body limit and refuses ${limits.batchSize + 1}`, async () => {
        const memories = Array.from({ length: limits.batchSize }, (_, index) => {
          const prefix = `n${index} `;
          return { content: prefix + '😀'.repeat(limits.contentChars - prefix.length) };
        });
        const body = JSON.stringify({ scope: 'batch', memories });
        assert.ok(Buffer.byteLength(body) > 3_000_000 && Buffer.byteLength(body) < limits.bodyBytes, 'the largest batch fits the body limit');
        const stored = await accepted('remember', { scope: 'batch', memories });
        assert.equal(stored.memories.length, limits.batchSize);
        assert.ok(stored.memories.every((memory: { status: string }) => memory.status === 'created'));
        const listed = await accepted('search', { scope: 'batch', limit: limits.searchMaxPage });
        assert.equal(listed.memories.length, limits.batchSize);
        assert.equal([...listed.memories[0].content].length, limits.contentChars);
        const tooMany = Array.from({ length: limits.batchSize + 1 }, (_, index) => ({ content: `The user owns plant number ${index}.` }));
        await refused('remember', { scope: 'batch-over', memories: tooMany }, 'memories');
        assert.equal((await accepted('search', { scope: 'batch-over' })).memories.length, 0);
        await refused('remember', { scope: 'batch-over', memories: [] }, 'memories');
      });

      it(`refuses a body over ${limits.bodyBytes} bytes with 413 payload_too_large`, async () => {
        const frame = (content: string) => `{"memories":[{"content":"${content}"}]}`;
        const padding = limits.bodyBytes - frame('').length;
        const atLimit = await server.http('POST', '/v1/remember', { body: frame('a'.repeat(padding)) });
        assert.equal(atLimit.status, 400, 'a body at the limit is read (and its content refused as too long)');
        assert.equal(atLimit.json.error.field, 'memories[0].content');
        const over = await server.http('POST', '/v1/remember', { body: frame('a'.repeat(padding + 1)) });
        assert.equal(over.status, 413);
        assert.equal(over.json.ok, false);
        assert.equal(over.json.error.code, 'payload_too_large');
      });

      it(`supersedes up to ${limits.supersedesPerMemory} memories at once and refuses more before looking any up`, async () => {
        const scope = 'supersedes';
        const old = await server.remember(
          Array.from({ length: limits.supersedesPerMemory + 1 }, (_, index) => `The user's locker code was ${1000 + index}.`),
          scope,
        );
        await refused('remember', one({ content: 'The user has no locker any more.', supersedes: old }, scope), 'memories[0].supersedes');
        for (const id of old) assert.equal((await accepted('get', { id })).status, 'valid', 'nothing superseded by the refused call');
        const replaced = old.slice(0, limits.supersedesPerMemory);
        const [stored] = (await accepted('remember', one({ content: 'The user has no locker any more.', supersedes: replaced }, scope))).memories;
        assert.equal(stored.status, 'created');
        assert.deepEqual([...stored.superseded].sort(), [...replaced].sort());
        for (const id of replaced) assert.equal((await accepted('get', { id })).superseded_by, stored.id);
        assert.equal((await accepted('get', { id: old.at(-1) })).status, 'valid');
        // An id of the right shape that no memory has is a 404 naming the field; a malformed one is a 400.
        const error = await refused(
          'remember',
          one({ content: 'replacing a ghost', supersedes: [missingId] }, scope),
          'memories[0].supersedes',
          404,
          'not_found',
        );
        assert.match(error.message, new RegExp(missingId));
        await refused('remember', one({ content: 'replacing nonsense', supersedes: ['not-an-id'] }, scope), 'memories[0].supersedes[0]');
      });

      it(`takes a query of ${limits.queryChars} characters and refuses one more, in recall and search`, async () => {
        const scope = 'query';
        await server.remember(['The user keeps axolotls in a cold-water tank.'], scope);
        // Only the first 64 words of a query are read: the one that matters comes first.
        const query = `axolotls ${textOf(limits.queryChars - 9, 'q')}`;
        assert.equal(query.length, limits.queryChars);
        const recalled = await accepted('recall', { scope, query });
        assert.match(recalled.memories[0].content, /axolotls/);
        assert.match((await accepted('search', { scope, query })).memories[0].content, /axolotls/);
        const longer = `${query}q`;
        await refused('recall', { scope, query: longer }, 'query');
        await refused('search', { scope, query: longer }, 'query');
      });

      it(`takes ${limits.messages} messages of ${limits.messageChars} characters, refuses more, and reads only the newest ${limits.conversationChars} characters`, async () => {
        const scope = 'messages';
        const [zebrafish] = await server.remember(['The user breeds zebrafish at home.'], scope);
        const filler = (length: number) => '.'.repeat(length);
        const messages = Array.from({ length: limits.messages }, (_, index) => ({ role: index % 2 ? 'assistant' : 'user', content: `turn ${index}` }));
        // Of the longest message only the newest conversationChars characters are read, so the word is there.
        const newest = ` zebrafish ${'.'.repeat(limits.conversationChars - 11)}`;
        assert.equal(newest.length, limits.conversationChars);
        messages[limits.messages - 1] = { role: 'user', content: `${textOf(limits.messageChars - newest.length, 'm')}${newest}` };
        assert.equal(messages.at(-1)?.content.length, limits.messageChars);
        assert.equal((await accepted('recall', { scope, messages })).memories[0]?.id, zebrafish);
        await refused('recall', { scope, messages: [...messages, { role: 'user', content: 'one more' }] }, 'messages');
        await refused('recall', { scope, messages: [{ role: 'user', content: `${'x'.repeat(limits.messageChars)}y` }] }, 'messages[0].content');
        await refused('recall', { scope, messages: [{ role: 'robot', content: 'hello' }] }, 'messages[0].role');

        // Only the newest conversationChars characters are read: a word just inside counts, one just outside does not.
        const inside = [
          { role: 'user', content: 'zebrafish' },
          { role: 'assistant', content: filler(limits.conversationChars - 'zebrafish'.length) },
        ];
        assert.equal((await accepted('recall', { scope, messages: inside })).memories[0]?.id, zebrafish);
        const outside = [
          { role: 'user', content: 'zebrafish' },
          { role: 'assistant', content: filler(limits.conversationChars - 4) },
        ];
        assert.deepEqual((await accepted('recall', { scope, messages: outside })).memories, []);
        // A query is read whatever the conversation's length.
        assert.equal((await accepted('recall', { scope, messages: outside, query: 'zebrafish' })).memories[0]?.id, zebrafish);
      });

      it(`budgets recall by max_tokens up to ${limits.recallMaxTokens} (default ${limits.recallDefaultTokens}) and limit up to ${limits.recallMaxResults} (default ${limits.recallDefaultResults})`, async () => {
        const scope = 'recall-budget';
        await server.remember(
          Array.from({ length: limits.recallDefaultResults + 2 }, (_, index) => `Heron sighting number ${index} by the canal.`),
          scope,
        );
        const byDefault = await accepted('recall', { scope, query: 'heron' });
        assert.equal(byDefault.max_tokens, limits.recallDefaultTokens);
        assert.equal(byDefault.memories.length, limits.recallDefaultResults);
        assert.equal(byDefault.omitted, 2);
        const widest = await accepted('recall', { scope, query: 'heron', max_tokens: limits.recallMaxTokens, limit: limits.recallMaxResults });
        assert.equal(widest.max_tokens, limits.recallMaxTokens);
        assert.equal(widest.memories.length, limits.recallDefaultResults + 2);
        assert.equal(widest.omitted, 0);
        const tiny = await accepted('recall', { scope, query: 'heron', max_tokens: 1 });
        assert.deepEqual(tiny.memories, [], 'nothing fits one token');
        assert.equal(tiny.omitted, limits.recallDefaultResults + 2);
        await refused('recall', { scope, query: 'heron', max_tokens: limits.recallMaxTokens + 1 }, 'max_tokens');
        await refused('recall', { scope, query: 'heron', max_tokens: 0 }, 'max_tokens');
        await refused('recall', { scope, query: 'heron', max_tokens: 10.5 }, 'max_tokens');
        await refused('recall', { scope, query: 'heron', limit: limits.recallMaxResults + 1 }, 'limit');
        await refused('recall', { scope, query: 'heron', limit: 0 }, 'limit');
      });

      it(`pages search by limit up to ${limits.searchMaxPage} (default ${limits.searchDefaultPage})`, async () => {
        const scope = 'search-page';
        await server.remember(
          Array.from({ length: limits.searchDefaultPage + 5 }, (_, index) => `Bird feeder refill number ${index}.`),
          scope,
        );
        const first = await accepted('search', { scope });
        assert.equal(first.memories.length, limits.searchDefaultPage);
        assert.ok(first.next_cursor);
        const rest = await accepted('search', { scope, cursor: first.next_cursor });
        assert.equal(rest.memories.length, 5);
        assert.equal(rest.next_cursor, null);
        assert.equal((await accepted('search', { scope, limit: limits.searchMaxPage })).memories.length, limits.searchDefaultPage + 5);
        await refused('search', { scope, limit: limits.searchMaxPage + 1 }, 'limit');
        await refused('search', { scope, limit: 0 }, 'limit');
      });

      it(`reads a cursor of ${limits.cursorChars} characters (and says it is not one it issued) and refuses a longer one`, async () => {
        const atLimit = await refused('search', { query: 'anything', cursor: 'A'.repeat(limits.cursorChars) }, 'cursor');
        assert.match(atLimit.message, /cursor is not one this server issued/);
        const over = await refused('search', { query: 'anything', cursor: 'A'.repeat(limits.cursorChars + 1) }, 'cursor');
        assert.match(over.message, /cursor must NOT have more than/);
      });

      it('accepts back every cursor it issues, even for a long query of long words', async () => {
        // 64 long words: a cursor carries the query's stems and words, which is more than a few kilobytes.
        const stems = [
          'internationalize',
          'compartmentalize',
          'institutionalize',
          'decentralize',
          'commercialize',
          'conceptualize',
          'contextualize',
          'overemphasize',
          'individualize',
          'industrialize',
          'demilitarize',
          'photosynthesize',
          'characterize',
          'standardize',
          'synchronize',
          'rationalize',
          'materialize',
          'sensationalize',
          'revolutionize',
          'sentimentalize',
          'depersonalize',
          'intellectualize',
          'nationalize',
          'hospitalize',
          'generalize',
          'personalize',
          'visualize',
          'specialize',
          'neutralize',
          'capitalize',
          'categorize',
          'prioritize',
        ];
        const english = stems.flatMap((stem) => [stem.replace(/e$/, 'ed'), stem.replace(/e$/, 'ing')]).join(' ');
        // And a pathological one: 32 words of 60 two-byte letters.
        const alphabet = 'абвгдежзийклмнопрстуфхцчшщъыьэюя';
        const cyrillic = Array.from({ length: 32 }, (_, index) => (alphabet.slice(index) + alphabet + alphabet).slice(0, 60)).join(' ');
        assert.ok(cyrillic.length <= limits.queryChars);
        for (const [scope, query, contents] of [
          ['long-words', english, Array.from({ length: 5 }, (_, index) => `${stems.join(' ')} report${index}`)],
          ['long-cyrillic', cyrillic, Array.from({ length: 5 }, (_, index) => `${cyrillic} отчёт${'а'.repeat(index)}`)],
        ] as const) {
          const ids = await server.remember([...contents], scope);
          const seen: string[] = [];
          let cursor: string | undefined;
          for (let page = 0; page < 10; page++) {
            const data = await accepted('search', { scope, query, limit: 2, ...(cursor === undefined ? {} : { cursor }) });
            seen.push(...data.memories.map((memory: { id: string }) => memory.id));
            if (data.next_cursor === null) break;
            assert.ok(data.next_cursor.length <= limits.cursorChars, `${scope}: a cursor of ${data.next_cursor.length} characters`);
            cursor = data.next_cursor;
          }
          assert.deepEqual([...seen].sort(), [...ids].sort(), `${scope}: every memory once, over three pages`);
        }
      });

      it(`keeps a forget reason of ${limits.reasonChars} characters and refuses one more`, async () => {
        const [first, second] = await server.remember(['The user once lived in Ghent.', 'The user once lived in Bruges.'], 'reasons');
        const reason = `r${'e'.repeat(limits.reasonChars - 1)}`;
        await refused('forget', { id: first, reason: `${reason}x` }, 'reason');
        await refused('forget', { id: first, reason: 'two\nlines' }, 'reason');
        assert.equal((await accepted('get', { id: first })).status, 'valid', 'a refused forget forgets nothing');
        assert.equal((await accepted('forget', { id: first, reason })).status, 'forgotten');
        const erased = await server.http('DELETE', `/v1/memories/${second}?hard=true&reason=${'x'.repeat(limits.reasonChars + 1)}`);
        assert.equal(erased.status, 400);
        assert.equal(erased.json.error.field, 'reason');
        assert.equal((await accepted('get', { id: second })).status, 'valid');
      });

      it('takes importance from 0 to 1 and refuses anything outside', async () => {
        const stored = await accepted('remember', {
          scope: 'importance',
          memories: [
            { content: 'The user does not care about football.', importance: 0 },
            { content: 'The user is allergic to wasp stings.', importance: 1 },
          ],
        });
        const importances = await Promise.all(stored.memories.map(async (memory: { id: string }) => (await accepted('get', { id: memory.id })).importance));
        assert.deepEqual(importances, [0, 1]);
        for (const importance of [-0.01, 1.01, '0.5', null])
          await refused('remember', one({ content: 'importance out of range', importance }, 'importance'), 'memories[0].importance');
      });

      it('refuses an unknown field, naming it', async () => {
        const nested = await refused('remember', one({ content: 'typo', tgas: ['x'] }), 'memories[0]');
        assert.match(nested.message, /unknown field "tgas"/);
        const top = await refused('remember', { scpoe: 'limits', memories: [{ content: 'typo' }] }, '');
        assert.match(top.message, /unknown field "scpoe"/);
        assert.match((await refused('recall', { query: 'x', max_token: 10 }, '')).message, /unknown field "max_token"/);
        assert.match((await refused('search', { query: 'x', page: 2 }, '')).message, /unknown field "page"/);
        assert.match((await refused('forget', { id: missingId, hrad: true }, '')).message, /unknown field "hrad"/);
        assert.match((await refused('recall', { messages: [{ role: 'user', content: 'x', name: 'bob' }] }, 'messages[0]')).message, /unknown field "name"/);
        assert.match((await refused('remember', one({ content: 'x', source: { thread: '1' } }), 'memories[0].source')).message, /unknown field "thread"/);
        assert.equal((await accepted('search', { scope: 'limits', query: 'typo' })).memories.length, 0, 'nothing of the refused calls was stored');
      });
    }

    it('stores nothing of a batch when one of its memories is refused', async () => {
      const scope = 'atomic';
      const [elsewhere] = await server.remember(['The user rents a garage.'], 'atomic-elsewhere');
      const [kept, keyed, forgotten] = await server.remember(
        ['The user drinks oolong tea.', { content: 'The user banks with Triodos.', key: 'user.bank' }, 'The user played the oboe.'],
        scope,
      );
      await server.ok('forget', { id: forgotten });
      const documents = (await server.lexicon()).documentCount;
      const batch = (third: Record<string, unknown>) => ({
        scope,
        memories: [
          { content: 'The user switched from oolong to sencha.', supersedes: [kept] },
          { content: 'The user moved their savings to Bunq.', key: 'user.bank' },
          third,
        ],
      });
      for (const [third, status, code] of [
        [{ content: 'The user replaced the ghost.', supersedes: [missingId] }, 404, 'not_found'],
        [{ content: 'The user took up the oboe again.', supersedes: [forgotten] }, 409, 'conflict'],
        [{ content: 'The user replaced a memory of another scope.', supersedes: [elsewhere] }, 400, 'invalid_request'],
        [{ content: 'The user replaced the tea twice.', supersedes: [kept] }, 409, 'conflict'],
      ] as const) {
        const answer = await server.call('remember', batch(third));
        assert.equal(answer.status, status, answer.text);
        assert.equal(answer.json.error.code, code);
        assert.equal(answer.json.error.field, 'memories[2].supersedes');
        const found = await server.ok('search', { scope, query: 'sencha Bunq ghost oboe', include_superseded: true, include_forgotten: true });
        assert.deepEqual(
          found.memories.map((memory: { id: string }) => memory.id),
          [forgotten],
          'only the forgotten oboe memory from before; nothing of the batch',
        );
        assert.equal((await server.ok('get', { id: kept })).status, 'valid', 'the first memory’s supersession was rolled back');
        assert.equal((await server.ok('get', { id: keyed })).status, 'valid', 'the key’s previous holder is still current');
        assert.equal((await server.lexicon()).documentCount, documents, 'the term statistics did not count the refused memories');
      }
      // Without the bad memory the same batch goes through, each memory created anew.
      const stored = await server.ok('remember', { scope, memories: batch({ content: 'The user bought an oboe reed.' }).memories });
      assert.deepEqual(
        stored.memories.map((memory: { status: string }) => memory.status),
        ['created', 'created', 'created'],
      );
      assert.deepEqual(stored.memories[0].superseded, [kept]);
      assert.deepEqual(stored.memories[1].superseded, [keyed]);
      assert.equal((await server.lexicon()).documentCount, documents + 3);
    });
  });
}
