import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServiceApp } from '@platform/kit/http/create-app';
import { silentLogger } from '@platform/testkit/databases';
import { Type } from 'typebox';
import { compileSchemasOnFirstUse } from './lazy-schemas.ts';

function appWithOneRoute() {
  const app = createServiceApp({ logger: silentLogger, bodyLimit: 1024, api: undefined });
  const schemas = compileSchemasOnFirstUse(app);
  app.post(
    '/notes',
    {
      schema: {
        body: Type.Object({ text: Type.String({ maxLength: 5 }) }, { additionalProperties: false }),
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })) }),
        response: { 200: Type.Object({ text: Type.String(), limit: Type.Integer() }) },
      },
    },
    async (request) => ({ ...request.body, limit: request.query.limit ?? 1 }),
  );
  return { app, schemas };
}

test('route schemas compile on first use and check and write as they would have at start', async (t) => {
  const { app } = appWithOneRoute();
  t.after(() => app.close());
  await app.ready();

  const refused = await app.inject({ method: 'POST', url: '/notes', payload: { text: 'too long' } });
  assert.equal(refused.statusCode, 400);
  assert.match(refused.json().error.message, /body\/text must NOT have more than 5 characters/);
  const unknown = await app.inject({ method: 'POST', url: '/notes', payload: { text: 'hi', extra: 1 } });
  assert.equal(unknown.statusCode, 400);
  const badQuery = await app.inject({ method: 'POST', url: '/notes?limit=0', payload: { text: 'hi' } });
  assert.match(badQuery.json().error.message, /querystring\/limit must be >= 1/);

  const answered = await app.inject({ method: 'POST', url: '/notes?limit=3', payload: { text: 'hi' } });
  assert.equal(answered.statusCode, 200);
  // The query coerced to a number, written by the route's serialiser.
  assert.deepEqual(answered.json(), { text: 'hi', limit: 3 });
});

test('nothing compiles until a request needs it, and compileAll compiles the rest once', async (t) => {
  const { app, schemas } = appWithOneRoute();
  t.after(() => app.close());
  await app.ready();
  // The body and the query check, and one serialiser per declared status (200 and the kit's 4xx and 5xx).
  const all = schemas.compileAll();
  assert.ok(all >= 5, `${all} compiled`);
  assert.equal(schemas.compileAll(), 0);

  const fresh = appWithOneRoute();
  t.after(() => fresh.app.close());
  await fresh.app.ready();
  await fresh.app.inject({ method: 'POST', url: '/notes', payload: { text: 'hi' } });
  assert.equal(fresh.schemas.compileAll(), all - 3, 'the request compiled the body and query checks and the 200 serialiser');
});
