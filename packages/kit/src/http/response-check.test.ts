import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { Type } from 'typebox';
import { okSchema } from '../envelope.ts';
import { ServiceError } from '../errors.ts';
import { nonJsonResponse, openObject } from '../wire-schemas.ts';
import { createServiceApp } from './create-app.ts';
import { checkResponsesAgainstSchemas, closeObjects } from './response-check.ts';

test('with the check on, an answer outside its declared schema fails the request instead of being trimmed', async (t) => {
  checkResponsesAgainstSchemas();
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
  t.after(() => app.close());
  const schema = { response: { 200: okSchema(Type.Object({ id: Type.String(), at: Type.String({ format: 'date-time' }) }, { additionalProperties: false })) } };
  app.get('/right', { schema }, async () => ({ ok: true as const, data: { id: 'a', at: new Date(0) as unknown as string } }));
  app.get('/extra', { schema }, async () => ({ ok: true as const, data: { id: 'a', at: '1970-01-01T00:00:00.000Z', secret: 'x' } }));
  app.get('/undeclared', async () => ({ anything: 1 }));

  assert.equal((await app.inject('/right')).statusCode, 200, 'a Date goes out as its ISO text, which matches');
  const extra = await app.inject('/extra');
  assert.equal(extra.statusCode, 500);
  assert.doesNotMatch(extra.body, /secret/);
  assert.equal((await app.inject('/undeclared')).statusCode, 200, 'nothing to check against');
});

test('an answer carrying a member its schema does not list fails, unless the schema says the object is open', async (t) => {
  checkResponsesAgainstSchemas();
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
  t.after(() => app.close());
  // No additionalProperties at all: the serialiser would drop `extra` without a word.
  const listed = { response: { 200: okSchema(Type.Object({ id: Type.String() })) } };
  const open = { response: { 200: okSchema(Type.Object({ id: Type.String(), meta: openObject() })) } };
  app.get('/listed', { schema: listed }, async () => ({ ok: true as const, data: { id: 'a', extra: 1 } }));
  app.get('/open', { schema: open }, async () => ({ ok: true as const, data: { id: 'a', meta: { anything: [1] } } }));
  app.get('/page', { schema: { response: { 200: nonJsonResponse('text/html', 'a page') } } }, async (_request, reply) =>
    reply.type('text/html').send('<p>hi</p>'),
  );

  const dropped = await app.inject('/listed');
  assert.equal(dropped.statusCode, 500);
  assert.deepEqual((await app.inject('/open')).json(), { ok: true, data: { id: 'a', meta: { anything: [1] } } });
  const page = await app.inject('/page');
  assert.equal(page.statusCode, 200);
  assert.equal(page.body, '<p>hi</p>', 'text is sent as it is, not serialised as a JSON string');
});

test('closeObjects closes listed objects, keeps open and record-like ones open, and leaves allOf members alone', () => {
  const schema = Type.Object({
    a: Type.Object({ b: Type.String() }),
    open: openObject(),
    record: Type.Record(Type.String(), Type.Object({ c: Type.String() })),
    both: Type.Intersect([Type.Object({ d: Type.String() }), Type.Object({ e: Type.String() })]),
    list: Type.Array(Type.Union([Type.Object({ f: Type.String() }), Type.Null()])),
  });
  type Node = {
    additionalProperties?: unknown;
    properties: Record<string, Node>;
    patternProperties: Record<string, Node>;
    allOf: Node[];
    items: Node;
    anyOf: Node[];
  };
  const closed = closeObjects(schema) as Node;
  const { a, open, record, both, list } = closed.properties as Record<'a' | 'open' | 'record' | 'both' | 'list', Node>;
  assert.equal(closed.additionalProperties, false);
  assert.equal(a.additionalProperties, false);
  assert.equal(open.additionalProperties, true);
  assert.equal(record.additionalProperties, undefined);
  assert.equal(record.patternProperties['^.*$']?.additionalProperties, false);
  assert.deepEqual(
    both.allOf.map((member) => member.additionalProperties),
    [undefined, undefined],
  );
  assert.equal(list.items.anyOf[0]?.additionalProperties, false);
  assert.equal((schema as { additionalProperties?: unknown }).additionalProperties, undefined, 'the route’s own schema is not changed');
});

test('every route declares the failure envelope for 4xx and 5xx, and an error keeps the members of its own', async (t) => {
  checkResponsesAgainstSchemas();
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
  t.after(() => app.close());
  const schema = { response: { 200: okSchema(Type.Object({ id: Type.String() })) } };
  app.post('/clash', { schema }, async () => {
    throw new ServiceError('conflict', 'an alarm already holds that key', { details: { alarm_id: 'a1', reason: 'duplicate' } });
  });
  app.get('/boom', { schema }, async () => {
    throw new Error('SELECT secret FROM keys');
  });

  const clash = await app.inject({ method: 'POST', url: '/clash' });
  assert.equal(clash.statusCode, 409);
  assert.deepEqual(clash.json(), {
    ok: false,
    error: { code: 'conflict', message: 'an alarm already holds that key', retryable: false, alarm_id: 'a1', reason: 'duplicate' },
  });
  const boom = await app.inject('/boom');
  assert.deepEqual(boom.json(), { ok: false, error: { code: 'internal', message: 'internal error', retryable: true } });
  const document = (await app.inject('/openapi.json')).json();
  const failures = document.paths['/clash'].post.responses;
  assert.deepEqual(Object.keys(failures).sort(), ['200', '4XX', '5XX']);
  const envelope = failures['4XX'].content['application/json'].schema;
  assert.deepEqual(envelope.properties.error.required, ['code', 'message', 'retryable']);
  assert.equal(envelope.properties.error.additionalProperties, true);
});
