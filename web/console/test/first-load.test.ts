import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstLoadBytes, scriptBudgetBytes } from './first-load-size.ts';

test('the first load fetches under 200 KB of JavaScript compressed, every script it names being in the build', () => {
  const { files, scriptGzip } = firstLoadBytes();
  assert.ok(
    files.some((file) => file.name.endsWith('.js')),
    'index.html names its script',
  );
  assert.ok(scriptGzip < scriptBudgetBytes, `${scriptGzip} bytes of gzipped JavaScript on the first load (budget ${scriptBudgetBytes})`);
});
