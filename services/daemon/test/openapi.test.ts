import { test } from 'node:test';
import { assertDescribesEveryRoute } from '@platform/testkit/openapi-checks';
import { removeFolder, startDaemon, startStack } from './harness.ts';

test('GET /openapi.json describes every route and GET /docs renders it, both without the daemon token', async (t) => {
  // No other service: the description needs none, and the daemon starts without them.
  const stack = await startStack({ gateway: false });
  const daemon = await startDaemon(stack.env, { begin: false });
  t.after(async () => {
    await daemon.stop();
    removeFolder(daemon.dataDir);
    await stack.close();
  });
  await assertDescribesEveryRoute(daemon.daemon.app, { title: 'daemon' });
});
