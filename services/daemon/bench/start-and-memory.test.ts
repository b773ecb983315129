import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idleMemoryVerdict, idleRssBoundMb } from './start-and-memory.ts';

test('the bench fails the run, saying so in one line, when the bundle idles over the bound', () => {
  const over = idleMemoryVerdict({ rssMb: 82.7, maxRssMb: 84.9 }, 5);
  assert.equal(over.ok, false);
  assert.equal(over.line, `FAIL idle memory: the bundle idles at 82.7 MB resident (median of 5 starts, max 84.9 MB), over the ${idleRssBoundMb} MB bound`);
  const under = idleMemoryVerdict({ rssMb: 69.1, maxRssMb: 69.8 }, 5);
  assert.equal(under.ok, true);
  assert.match(under.line, /^idle memory: ok, the bundle idles at 69\.1 MB/);
  assert.equal(idleMemoryVerdict({ rssMb: idleRssBoundMb, maxRssMb: idleRssBoundMb }, 5).ok, false, 'at the bound is over it');
});
