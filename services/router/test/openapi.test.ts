import { test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { assertDescribesEveryRoute } from '@platform/testkit/openapi-checks';
import { startRouter } from './harness.ts';

// The description does not depend on the database engine: one is enough.
const [engine] = testEngines();

test('both listeners describe every route in GET /openapi.json and render it in GET /docs, without a token', async (t) => {
  const router = await startRouter(engine!, undefined);
  t.after(() => router.dispose());
  await assertDescribesEveryRoute(router.router.publicApp, { title: 'router (public)' });
  await assertDescribesEveryRoute(router.router.internalApp, { title: 'router (internal)' });
});
