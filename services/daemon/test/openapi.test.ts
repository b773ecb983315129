import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { assertDescribesEveryRoute } from '@platform/testkit/openapi-checks';
import { removeFolder, startDaemon, startStack } from './harness.ts';

/** A daemon with no other service: the description and the schemas need none, and it starts without them. */
async function bareDaemon(t: TestContext) {
  const stack = await startStack({ gateway: false });
  const daemon = await startDaemon(stack.env, { begin: false });
  t.after(async () => {
    await daemon.stop();
    removeFolder(daemon.dataDir);
    await stack.close();
  });
  return daemon.daemon;
}

test('GET /openapi.json describes every route and GET /docs renders it, both without the daemon token', async (t) => {
  await assertDescribesEveryRoute((await bareDaemon(t)).app, { title: 'daemon' });
});

test('every route schema compiles (they compile on first use, so a bad one would otherwise fail only its first request)', async (t) => {
  const daemon = await bareDaemon(t);
  await daemon.app.ready();
  assert.ok(daemon.schemas.compileAll() > 100);
  assert.equal(daemon.schemas.compileAll(), 0);
});
