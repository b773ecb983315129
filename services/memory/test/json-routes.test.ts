import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { type MemoryServer, startOnFreshDatabase, token } from './harness.ts';

const [pglite] = testEngines();

describe('JSON routes', () => {
  let server: MemoryServer;
  let dispose: () => Promise<void>;
  before(async () => {
    if (pglite === undefined) throw new Error('no engine');
    ({ server, dispose } = await startOnFreshDatabase(pglite));
  });
  after(() => dispose());

  it('serves every tool as POST /v1/<tool> in the platform envelope', async () => {
    const stored = await server.call('remember', { memories: [{ content: 'The router is in the hall closet.' }] });
    assert.equal(stored.status, 200);
    assert.equal(stored.json.ok, true);
    const id = stored.json.data.memories[0].id;
    for (const [tool, args] of [
      ['recall', { query: 'router' }],
      ['search', { query: 'router' }],
      ['get', { id }],
      ['history', { id }],
    ] as const) {
      const answer = await server.call(tool, args);
      assert.equal(answer.status, 200, tool);
      assert.equal(answer.json.ok, true);
    }
    const forget = await server.call('forget', { id });
    assert.deepEqual(forget.json, { ok: true, data: { id, status: 'forgotten', changed: true } });
  });

  it('serves the REST spellings: GET a memory, GET its history, DELETE it softly or hard', async () => {
    const [id] = await server.remember(['The recycling goes out on Wednesday night.']);
    const got = await server.http('GET', `/v1/memories/${id}`);
    assert.equal(got.json.data.content, 'The recycling goes out on Wednesday night.');
    const history = await server.http('GET', `/v1/memories/${id}/history`);
    assert.deepEqual(
      history.json.data.chain.map((entry: { id: string }) => entry.id),
      [id],
    );
    const soft = await server.http('DELETE', `/v1/memories/${id}?reason=moved`);
    assert.equal(soft.json.data.status, 'forgotten');
    const hard = await server.http('DELETE', `/v1/memories/${id}?hard=true`);
    assert.equal(hard.json.data.status, 'erased');
    assert.equal((await server.http('GET', `/v1/memories/${id}`)).status, 404);
    const bad = await server.http('DELETE', `/v1/memories/${id}?hard=maybe`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.field, 'hard');
    const notAnId = await server.http('GET', '/v1/memories/42');
    assert.equal(notAnId.status, 400);
    assert.equal(notAnId.json.error.message, 'id is not a memory id');
  });

  it('needs the bearer on every route but /healthz, compared exactly', async () => {
    assert.equal((await server.http('GET', '/healthz', { bearer: null })).status, 200);
    for (const bearer of [null, 'wrong', `${token}x`, token.slice(0, -1)]) {
      const answer = await server.call('recall', { query: 'router' }, { bearer });
      assert.equal(answer.status, 401);
      assert.equal(answer.json.error.code, 'unauthorized');
      assert.equal((await server.http('GET', '/v1/memories/01234567-89ab-7def-8123-456789abcdef', { bearer })).status, 401);
    }
  });

  it('answers malformed requests with clear errors, never a 500', async () => {
    const notJson = await server.http('POST', '/v1/remember', { body: '{"memories": [' });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json.error.message, 'request body is not valid JSON');
    const text = await server.http('POST', '/v1/recall', { body: 'query=router', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.status, 415);
    const array = await server.call('recall', [1, 2]);
    assert.equal(array.status, 400);
    assert.equal(array.json.error.message, 'arguments must be a JSON object');
    const empty = await server.http('POST', '/v1/recall');
    assert.equal(empty.status, 400);
    assert.match(empty.json.error.message, /recall needs a non-empty query/);
    const wrongType = await server.call('search', { limit: '10' });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.json.error.message, 'limit must be integer');
    const badKind = await server.call('remember', { memories: [{ content: 'x', kind: 'gossip' }] });
    assert.equal(badKind.status, 400);
    assert.equal(badKind.json.error.field, 'memories[0].kind');
    assert.equal(badKind.json.error.message, 'memories[0].kind must be one of fact, preference, event, note, procedure');
    const badDate = await server.call('recall', { query: 'x', created_after: 'yesterday' });
    assert.equal(badDate.status, 400);
    assert.equal(badDate.json.error.field, 'created_after');
    const unknownRoute = await server.http('POST', '/v1/summarize', { body: {} });
    assert.equal(unknownRoute.status, 404);
  });
});
