import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { Type } from 'typebox';
import { createServiceApp } from './create-app.ts';
import { registerHealthRoutes } from './health-routes.ts';
import { checkResponsesAgainstSchemas } from './response-check.ts';

test('GET /healthz answers its declared shapes: 200 with the details a service adds, 503 with its data and the error', async (t) => {
  checkResponsesAgainstSchemas();
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
  t.after(() => app.close());
  let up = true;
  registerHealthRoutes(app, {
    service: 'test',
    version: '1.0.0',
    ping: async () => up,
    details: () => ({ chain: { block: 7 }, status: 'alarm' }),
    detailsSchema: { chain: Type.Object({ block: Type.Integer() }) },
  });

  const alive = await app.inject('/healthz');
  assert.equal(alive.statusCode, 200);
  assert.deepEqual(alive.json(), { ok: true, data: { status: 'alarm', version: '1.0.0', db: true, chain: { block: 7 } } });
  up = false;
  const down = await app.inject('/healthz');
  assert.equal(down.statusCode, 503);
  assert.deepEqual(down.json(), {
    ok: false,
    data: { status: 'unavailable', version: '1.0.0', db: false },
    error: { code: 'unavailable', message: 'database unreachable', retryable: true },
  });
});
