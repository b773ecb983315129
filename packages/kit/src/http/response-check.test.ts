import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { Type } from 'typebox';
import { okSchema } from '../envelope.ts';
import { createServiceApp } from './create-app.ts';
import { checkResponsesAgainstSchemas } from './response-check.ts';

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
