import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { assertDescribesEveryRoute } from '@platform/testkit/openapi-checks';
import { startIdentityProvider, startRouter } from './harness.ts';

// The description does not depend on the database engine: one is enough.
const [engine] = testEngines();

test('both listeners describe every route in GET /openapi.json and render it in GET /docs, without a token', async (t) => {
  const router = await startRouter(engine!, undefined);
  t.after(() => router.dispose());
  await assertDescribesEveryRoute(router.router.publicApp, { title: 'router (public)' });
  await assertDescribesEveryRoute(router.router.internalApp, { title: 'router (internal)' });
});

test('every route names the credential it checks, and exactly those routes answer 401 without one', async (t) => {
  const idp = await startIdentityProvider();
  const router = await startRouter(engine!, idp);
  t.after(async () => {
    await router.dispose();
    await idp.close();
  });
  const expected = {
    public: { identityProviderJwt: ['/v/me', '/v/invites/redeem', '/{*}'] },
    internal: {
      adminToken: ['/admin/users', '/admin/users/{id}', '/admin/users/{id}/suspend', '/admin/users/{id}/restore', '/admin/invites'],
      wakeToken: ['/internal/wake'],
    },
  };
  for (const [listener, app] of [
    ['public', router.router.publicApp],
    ['internal', router.router.internalApp],
  ] as const) {
    const document = await assertDescribesEveryRoute(app, { title: `router (${listener})` });
    const secured: Record<string, Set<string>> = {};
    for (const [path, operations] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(operations)) {
        const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
        for (const scheme of schemes) secured[scheme] = new Set([...(secured[scheme] ?? []), path]);
        const url = path.replace('{id}', randomUUID()).replace('{*}', 'anything');
        const answer = await app.inject({ method: method.toUpperCase() as 'GET', url });
        assert.equal(answer.statusCode === 401, schemes.length > 0, `${method} ${path} answered ${answer.statusCode} without a credential`);
      }
    assert.deepEqual(
      Object.fromEntries(Object.entries(secured).map(([scheme, paths]) => [scheme, [...paths]])),
      expected[listener],
      `the ${listener} listener's secured routes`,
    );
    for (const scheme of Object.keys(expected[listener])) assert.equal(document.components?.securitySchemes?.[scheme]?.type, 'http');
  }
});
