import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import pino from 'pino';
import { Type } from 'typebox';
import { failure, ok } from './envelope.ts';
import { ServiceError } from './errors.ts';
import { createServiceApp } from './http/create-app.ts';

// Settlement's spec lists `retryable` as a member of every error (the scheduler's marks it optional), so the kit
// sends it on every failure as a boolean, false included: a caller can branch on it without a default.
describe('the envelope', () => {
  test('ok wraps the data', () => {
    assert.deepEqual(ok({ id: 1 }), { ok: true, data: { id: 1 } });
  });

  test('failure always carries retryable: false on a refusal and true where the catalogue says so', () => {
    assert.deepEqual(failure(new ServiceError('unauthorized', 'missing X-Ledger-Agent')), {
      ok: false,
      error: { code: 'unauthorized', message: 'missing X-Ledger-Agent', retryable: false },
    });
    assert.deepEqual(failure(new ServiceError('unavailable', 'sequencer busy')), {
      ok: false,
      error: { code: 'unavailable', message: 'sequencer busy', retryable: true },
    });
    assert.equal(failure(new ServiceError('rate_limited', 'slow down')).error.retryable, true);
    assert.equal(failure(new ServiceError('unavailable', 'compile timed out', { retryable: false })).error.retryable, false);
  });

  test('details ride along but cannot replace code, message or retryable', () => {
    const error = new ServiceError('conflict', 'alarm exists', { details: { alarm_id: 'a1', code: 'x', message: 'y', retryable: true } });
    assert.deepEqual(failure(error), { ok: false, error: { alarm_id: 'a1', code: 'conflict', message: 'alarm exists', retryable: false } });
  });
});

describe('the error handler', () => {
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 64, api: { title: 'test', version: '0.0.0' } });
  after(() => app.close());
  app.get('/refused', async () => {
    throw new ServiceError('forbidden', 'not yours');
  });
  app.get('/deferred', async () => {
    throw new ServiceError('unavailable', 'standby; retry shortly');
  });
  app.get('/limited', async () => {
    throw new ServiceError('rate_limited', 'retry after 1 s');
  });
  app.get('/broken', async () => {
    throw new Error('SELECT secret FROM somewhere failed');
  });
  app.post('/echo', { schema: { body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }) } }, async (request) => ok(request.body));

  const cases: Array<[string, InjectOptions, number, object]> = [
    ['a thrown 403', { method: 'GET', url: '/refused' }, 403, { code: 'forbidden', message: 'not yours', retryable: false }],
    ['an unknown route', { method: 'GET', url: '/nothing?x=1' }, 404, { code: 'not_found', message: 'no route for GET /nothing', retryable: false }],
    [
      'a failed validation',
      { method: 'POST', url: '/echo', payload: { n: '1' } },
      400,
      { code: 'invalid_request', message: 'body/n must be integer', retryable: false },
    ],
    [
      'invalid JSON',
      { method: 'POST', url: '/echo', payload: '{', headers: { 'content-type': 'application/json' } },
      400,
      { code: 'invalid_request', message: 'request body is not valid JSON', retryable: false },
    ],
    [
      'a body over the limit',
      { method: 'POST', url: '/echo', payload: { n: 1, pad: 'x'.repeat(100) } },
      413,
      { code: 'payload_too_large', message: 'request body is larger than this service accepts', retryable: false },
    ],
    ['a thrown 503', { method: 'GET', url: '/deferred' }, 503, { code: 'unavailable', message: 'standby; retry shortly', retryable: true }],
    ['a thrown 429', { method: 'GET', url: '/limited' }, 429, { code: 'rate_limited', message: 'retry after 1 s', retryable: true }],
    ['an unexpected failure', { method: 'GET', url: '/broken' }, 500, { code: 'internal', message: 'internal error', retryable: true }],
  ];
  for (const [name, request, status, error] of cases) {
    test(`${name}: ${status} with retryable as a boolean`, async () => {
      const answer = await app.inject(request);
      assert.equal(answer.statusCode, status);
      assert.deepEqual(answer.json(), { ok: false, error });
    });
  }
});
