import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, type Env } from '@platform/kit/config';
import type { Database } from '@platform/kit/db/open-database';
import { testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import type { MemorySchema } from '../src/db/schema.ts';
import { type EmbeddingServer, startEmbeddingServer } from './embedding-server.ts';
import { freshDatabase, type MemoryServer, startMemory } from './harness.ts';

const apiKey = 'sk-test-embeddings-7f3e91c2d4';
const modelA = 'test-embed-a';
const dimensions = 64;

interface VectorState {
  id: string;
  model: string | null;
  length: number | null;
}

/** What the database holds for the embeddings of a scope's memories (or of every memory with content). */
async function vectorStates(database: Database<MemorySchema>, server: MemoryServer, scope?: string): Promise<VectorState[]> {
  const length = server.service.vectors === 'pgvector' ? sql`vector_dims(embedding)` : sql`array_length(embedding, 1)`;
  const rows = await sql<VectorState>`
    select id, embedding_model as model, ${length}::int as length from memories
    where content is not null and ${scope === undefined ? sql`true` : sql`scope = ${scope}`}
    order by id`.execute(database.db);
  return rows.rows;
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (const [index, value] of a.entries()) {
    const other = b[index] ?? 0;
    dot += value * other;
    normA += value * value;
    normB += other * other;
  }
  return dot / Math.sqrt(normA * normB);
}

for (const engine of testEngines()) {
  describe(`embeddings from an OpenAI-compatible endpoint on ${engine.name}`, () => {
    let endpoint: EmbeddingServer;
    let database: Database<MemorySchema>;
    let server: MemoryServer;
    let dispose: () => Promise<void>;

    const embeddingEnv = (overrides: Env = {}): Env => ({
      // A trailing slash, as people paste it: the server must still call …/v1/embeddings.
      MEMORY_EMBEDDINGS_URL: `${endpoint.url}/`,
      MEMORY_EMBEDDINGS_MODEL: modelA,
      MEMORY_EMBEDDINGS_DIMENSIONS: String(dimensions),
      MEMORY_EMBEDDINGS_API_KEY: apiKey,
      ...overrides,
    });

    before(async () => {
      endpoint = await startEmbeddingServer({ dimensions, apiKey });
      const fresh = await freshDatabase(engine);
      database = fresh.database;
      dispose = async () => {
        await fresh.database.close();
        await fresh.dispose();
      };
      server = await startMemory(database, { env: embeddingEnv() });
    });
    after(async () => {
      await server.close();
      await dispose();
      await endpoint.close();
    });

    it('recalls a paraphrase sharing no keyword through the semantic channel, which keyword recall alone cannot', async () => {
      const scope = 'paraphrase';
      const contents = ["The user's physician is Dr. Okafor.", 'The user drives an old Volvo estate.', 'The user rents a flat in Leith near the harbour.'];
      const [physician] = await server.remember(contents, scope);

      const recalled = await server.ok('recall', { scope, query: 'who is my doctor?' });
      assert.deepEqual(recalled.channels, ['keyword', 'semantic']);
      const top = recalled.memories[0];
      assert.equal(
        top.id,
        physician,
        `the physician comes first, got ${JSON.stringify(recalled.memories.map((memory: { content: string }) => memory.content))}`,
      );
      assert.equal(top.why.keyword_rank, null, 'no keyword matched');
      assert.deepEqual(top.why.matched_words, []);
      assert.equal(top.why.semantic_rank, 1);
      const expected = cosine(endpoint.vectorOf('who is my doctor?', modelA), endpoint.vectorOf(contents[0] ?? '', modelA));
      assert.ok(Math.abs(top.why.similarity - expected) < 1e-3, `similarity ${top.why.similarity} is the cosine of the two vectors (${expected})`);
      assert.ok(top.why.similarity > 0.5);
      assert.match(top.why.summary, /semantic similarity/);
      // The Volvo and the flat are the vector index's next neighbours, but far less similar: not worth the budget.
      assert.deepEqual(
        recalled.memories.map((memory: { id: string }) => memory.id),
        [physician],
        'memories found only by meaning and far less similar than the best are left out',
      );

      // The same data on a server without embeddings: keyword recall works, but it cannot find the paraphrase.
      const plain = await freshDatabase(engine);
      const keywordOnly = await startMemory(plain.database);
      try {
        const [plainPhysician] = await keywordOnly.remember(contents, scope);
        const missed = await keywordOnly.ok('recall', { scope, query: 'who is my doctor?' });
        assert.deepEqual(missed.channels, ['keyword']);
        assert.ok(!missed.memories.some((memory: { id: string }) => memory.id === plainPhysician), 'keyword recall alone does not find the paraphrase');
        const byName = await keywordOnly.ok('recall', { scope, query: 'Okafor' });
        assert.equal(byName.memories[0]?.id, plainPhysician, 'the memory is there for a keyword that matches');
        assert.equal(byName.memories[0].why.semantic_rank, null);
        assert.equal(byName.memories[0].why.similarity, null);
      } finally {
        await keywordOnly.close();
        await plain.database.close();
        await plain.dispose();
      }
    });

    it('sends the API key as a bearer to the endpoint and never shows it in an answer', async () => {
      const scope = 'secrets';
      const requestsBefore = endpoint.requests;
      const answers: string[] = [];
      const remembered = await server.call('remember', { scope, memories: [{ content: 'The user is allergic to penicillin.', kind: 'fact' }] });
      answers.push(remembered.text);
      const id = remembered.json.data.memories[0].id;
      assert.ok(endpoint.requests > requestsBefore, 'the endpoint was asked');
      assert.equal(endpoint.lastAuthorization, `Bearer ${apiKey}`);
      assert.equal(endpoint.lastModel, modelA);

      const recalled = await server.call('recall', { scope, query: 'drug intolerance' });
      assert.deepEqual(recalled.json.data.channels, ['keyword', 'semantic']);
      assert.equal(recalled.json.data.memories[0].id, id);
      answers.push(recalled.text);
      for (const [tool, args] of [
        ['search', { scope, query: 'penicillin' }],
        ['get', { id }],
        ['history', { id }],
        ['recall', { scope, query: 'x'.repeat(2001) }],
      ] as const)
        answers.push((await server.call(tool, args)).text);
      answers.push((await server.http('GET', '/healthz')).text);
      const client = await server.mcp();
      const viaMcp = (await client.callTool({ name: 'recall', arguments: { scope, query: 'allergy' } })) as { content: { text: string }[] };
      answers.push(JSON.stringify(viaMcp));

      // The provider refuses the key: remembering and recalling still work, and the refusal leaks nothing.
      endpoint.apiKey = 'sk-some-other-key';
      try {
        const refusedAt = endpoint.requests;
        const stored = await server.call('remember', { scope, memories: [{ content: 'The user takes ibuprofen for migraines.' }] });
        assert.equal(stored.status, 200);
        assert.equal(stored.json.data.memories[0].status, 'created');
        answers.push(stored.text);
        const fallback = await server.call('recall', { scope, query: 'migraines' });
        assert.deepEqual(fallback.json.data.channels, ['keyword']);
        assert.match(fallback.json.data.memories[0].content, /ibuprofen/);
        answers.push(fallback.text);
        assert.ok(endpoint.requests >= refusedAt + 2, 'both calls tried the endpoint');
      } finally {
        endpoint.apiKey = apiKey;
      }
      for (const answer of answers) assert.ok(!answer.includes(apiKey) && !answer.includes('sk-'), `no key in ${answer.slice(0, 200)}`);
    });

    it('stores memories while the endpoint is down, answers from keywords, and embeds them once it is back', async () => {
      const scope = 'outage';
      endpoint.mode = 'fail';
      let ids: string[];
      try {
        ids = await server.remember(['The user owns a red Fiat Panda automobile.', 'The user is learning Portuguese on Tuesdays.'], scope);
        for (const id of ids) assert.equal((await server.ok('get', { id })).status, 'valid');
        assert.deepEqual(
          (await vectorStates(database, server, scope)).map((row) => row.model),
          [null, null],
          'stored without vectors',
        );
        const byKeyword = await server.ok('recall', { scope, query: 'Fiat Panda' });
        assert.deepEqual(byKeyword.channels, ['keyword'], 'the query could not be embedded either');
        assert.equal(byKeyword.memories[0].id, ids[0]);
        const byMeaning = await server.ok('recall', { scope, query: 'which vehicle do I have?' });
        assert.deepEqual(byMeaning.memories, []);
        await assert.rejects(server.backfill(), 'the backfill fails while the endpoint is down');
      } finally {
        endpoint.mode = 'ok';
      }

      const embedded = await server.backfill();
      assert.ok(embedded >= 2, `backfill embedded ${embedded}`);
      const states = await vectorStates(database, server, scope);
      assert.deepEqual(
        states.map((row) => [row.model, row.length]),
        [
          [modelA, dimensions],
          [modelA, dimensions],
        ],
      );
      const recalled = await server.ok('recall', { scope, query: 'which vehicle do I have?' });
      assert.deepEqual(recalled.channels, ['keyword', 'semantic']);
      assert.equal(recalled.memories[0].id, ids[0]);
      assert.equal(recalled.memories[0].why.semantic_rank, 1);
      assert.equal(await server.backfill(), 0, 'nothing left to embed');
    });

    it('does not store a vector of the wrong length, and the backfill embeds the memory later', async () => {
      const scope = 'wrong-length';
      const [balcony] = await server.remember(["The user's apartment has a south-facing balcony."], scope);
      endpoint.mode = 'wrong-length';
      let puppy: string | undefined;
      try {
        [puppy] = await server.remember([{ content: 'The user has a puppy called Biscuit.', kind: 'fact' }], scope);
        const models = new Map((await vectorStates(database, server, scope)).map((row) => [row.id, row.model]));
        assert.equal(models.get(balcony ?? ''), modelA);
        assert.equal(models.get(puppy ?? ''), null, 'the memory is stored, without a vector');
        const fallback = await server.ok('recall', { scope, query: 'Biscuit' });
        assert.deepEqual(fallback.channels, ['keyword']);
        assert.equal(fallback.memories[0].id, puppy);
      } finally {
        endpoint.mode = 'ok';
      }
      assert.ok((await server.backfill()) >= 1);
      const states = await vectorStates(database, server, scope);
      assert.deepEqual(
        states.map((row) => [row.model, row.length]),
        [
          [modelA, dimensions],
          [modelA, dimensions],
        ],
      );
      const recalled = await server.ok('recall', { scope, query: 'tell me about the dog' });
      assert.deepEqual(recalled.channels, ['keyword', 'semantic']);
      assert.equal(recalled.memories[0].id, puppy);
    });

    it('gives each memory its own vector by the index the endpoint returns, and stores none when the indexes are broken', async () => {
      const scope = 'indexes';
      const contents = ['The user walks the dog before breakfast.', 'The user takes the automobile to work on Fridays.', 'The user has a physician in Leith.'];
      endpoint.mode = 'reversed';
      let ids: string[];
      try {
        ids = await server.remember(contents, scope);
      } finally {
        endpoint.mode = 'ok';
      }
      for (const [position, query] of ['my puppy', 'my car', 'my doctor'].entries()) {
        const recalled = await server.ok('recall', { scope, query });
        assert.equal(recalled.memories[0].id, ids[position], `"${query}" finds its memory first`);
        const expected = cosine(endpoint.vectorOf(query, modelA), endpoint.vectorOf(contents[position] ?? '', modelA));
        assert.ok(Math.abs(recalled.memories[0].why.similarity - expected) < 1e-3, 'with the vector of its own text');
      }

      // Every entry claiming index 0: no memory may get another text's vector, and the backfill must not spin.
      const broken = 'indexes-broken';
      endpoint.mode = 'index-zero';
      try {
        const stored = await server.remember(['The user keeps bees on the roof.', 'The user sings in a choir on Tuesdays.'], broken);
        assert.deepEqual(
          (await vectorStates(database, server, broken)).map((row) => [stored.includes(row.id), row.model]),
          [
            [true, null],
            [true, null],
          ],
          'stored without vectors',
        );
        await assert.rejects(server.backfill(), /indexes do not match/);
      } finally {
        endpoint.mode = 'ok';
      }
      await server.backfill();
      assert.deepEqual(
        (await vectorStates(database, server, broken)).map((row) => row.model),
        [modelA, modelA],
      );
    });

    it('does not wait for an endpoint that hangs longer than MEMORY_EMBEDDINGS_TIMEOUT_MS', async () => {
      const scope = 'hang';
      const quick = await startMemory(database, { env: embeddingEnv({ MEMORY_EMBEDDINGS_TIMEOUT_MS: '100' }) });
      endpoint.mode = 'hang';
      try {
        const asked = endpoint.requests;
        const [id] = await quick.remember(['The user works night shifts at the observatory.'], scope);
        assert.equal((await quick.ok('get', { id })).status, 'valid');
        const recalled = await quick.ok('recall', { scope, query: 'observatory' });
        assert.deepEqual(recalled.channels, ['keyword']);
        assert.equal(recalled.memories[0].id, id);
        assert.ok(endpoint.requests >= asked + 2, 'both calls waited for the endpoint, then gave up');
      } finally {
        endpoint.mode = 'ok';
        await quick.close();
      }
      await server.backfill();
      assert.deepEqual(
        (await vectorStates(database, server, scope)).map((row) => row.model),
        [modelA],
      );
    });

    it('refuses to start with MEMORY_EMBEDDINGS_URL but no model or no dimensions, naming the missing setting', async () => {
      const base = { MEMORY_EMBEDDINGS_URL: endpoint.url, MEMORY_EMBEDDINGS_API_KEY: apiKey };
      const requests = endpoint.requests;
      await assert.rejects(
        startMemory(database, { env: { ...base, MEMORY_EMBEDDINGS_DIMENSIONS: '64' } }),
        (error: unknown) => error instanceof ConfigError && /MEMORY_EMBEDDINGS_MODEL is required/.test(error.message),
      );
      await assert.rejects(
        startMemory(database, { env: { ...base, MEMORY_EMBEDDINGS_MODEL: modelA } }),
        (error: unknown) => error instanceof ConfigError && /MEMORY_EMBEDDINGS_DIMENSIONS is required/.test(error.message),
      );
      await assert.rejects(
        startMemory(database, { env: { ...base, MEMORY_EMBEDDINGS_MODEL: modelA, MEMORY_EMBEDDINGS_DIMENSIONS: 'sixty-four' } }),
        (error: unknown) => error instanceof ConfigError && /MEMORY_EMBEDDINGS_DIMENSIONS must be an integer/.test(error.message),
      );
      assert.equal(endpoint.requests, requests, 'nothing was started');
    });

    // Last: it restarts the shared server with other models, which re-embeds every memory of the database.
    it('drops the vectors of another model on restart and embeds everything again with the new one', async () => {
      const rows = (await vectorStates(database, server)).length;
      await server.close();
      const textsBefore = endpoint.texts;
      server = await startMemory(database, { env: embeddingEnv({ MEMORY_EMBEDDINGS_MODEL: 'test-embed-b' }) });
      await server.backfill();
      assert.equal(endpoint.lastModel, 'test-embed-b');
      assert.ok(endpoint.texts - textsBefore >= rows, `every memory was embedded again (${endpoint.texts - textsBefore} texts for ${rows} memories)`);
      const states = await vectorStates(database, server);
      assert.equal(states.length, rows);
      for (const state of states) assert.deepEqual([state.model, state.length], ['test-embed-b', dimensions], `memory ${state.id}`);
      const recalled = await server.ok('recall', { scope: 'paraphrase', query: 'who is my doctor?' });
      assert.deepEqual(recalled.channels, ['keyword', 'semantic']);
      assert.match(recalled.memories[0].content, /physician/);
      assert.equal(recalled.memories[0].why.semantic_rank, 1);

      // A model with shorter vectors: the old ones go, and new memories are stored with the new length.
      await server.close();
      endpoint.dimensions = 32;
      server = await startMemory(database, { env: embeddingEnv({ MEMORY_EMBEDDINGS_MODEL: 'test-embed-c', MEMORY_EMBEDDINGS_DIMENSIONS: '32' }) });
      await server.backfill();
      const shorter = await vectorStates(database, server);
      for (const state of shorter) assert.deepEqual([state.model, state.length], ['test-embed-c', 32], `memory ${state.id}`);
      const [car] = await server.remember(['The user leases an electric automobile.'], 'paraphrase');
      assert.deepEqual(
        (await vectorStates(database, server)).filter((state) => state.id === car).map((state) => [state.model, state.length]),
        [['test-embed-c', 32]],
      );
      const again = await server.ok('recall', { scope: 'paraphrase', query: 'who is my doctor?' });
      assert.deepEqual(again.channels, ['keyword', 'semantic']);
      assert.match(again.memories[0].content, /physician/);
      const vehicle = await server.ok('recall', { scope: 'paraphrase', query: 'what car do I have?' });
      assert.equal(vehicle.memories[0].id, car);
    });
  });
}
