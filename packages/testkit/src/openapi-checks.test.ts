import assert from 'node:assert/strict';
import { test } from 'node:test';
import { okSchema } from '@platform/kit/envelope';
import { createServiceApp } from '@platform/kit/http/create-app';
import { pino } from 'pino';
import { Type } from 'typebox';
import { assertDescribesEveryRoute } from './openapi-checks.ts';

function app() {
  return createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'notes', version: '1.0.0' } });
}

test('a service whose routes all declare their answer passes; one route without fails the check, named', async (t) => {
  const described = app();
  t.after(() => described.close());
  described.get('/v1/notes', { schema: { response: { 200: okSchema(Type.Object({ count: Type.Integer() })) } } }, async () => ({
    ok: true as const,
    data: { count: 0 },
  }));
  described.get('/v1/gone', { schema: { response: { 405: Type.Object({ reason: Type.String() }) } } }, async (_request, reply) =>
    reply.status(405).send({ reason: 'never' }),
  );
  const document = await assertDescribesEveryRoute(described, { title: 'notes' });
  assert.deepEqual(Object.keys(document.paths['/v1/notes']?.get?.responses ?? {}).sort(), ['200', '4XX', '5XX'], 'the failure envelope is declared too');

  const undescribed = app();
  t.after(() => undescribed.close());
  undescribed.get('/v1/notes', async () => ({ ok: true }));
  await assert.rejects(assertDescribesEveryRoute(undescribed, { title: 'notes' }), /routes that declare no success response: GET \/v1\/notes/);
});
