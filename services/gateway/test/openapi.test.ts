import { test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { assertDescribesEveryRoute } from '@platform/testkit/openapi-checks';
import { startGateway } from './harness.ts';

// The description does not depend on the database engine: one is enough.
const [engine] = testEngines();

test('GET /openapi.json describes every route and GET /docs renders it, both without a bearer', async (t) => {
  const s = await startGateway(engine!);
  t.after(() => s.close());
  await assertDescribesEveryRoute(s.app, { title: 'gateway' });
});
