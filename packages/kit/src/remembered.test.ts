import assert from 'node:assert/strict';
import { test } from 'node:test';
import { remembered } from './remembered.ts';

test('answers come from the function once per key, and the least recently used key leaves past the bound', () => {
  const asked: string[] = [];
  const upper = remembered((key: string) => {
    asked.push(key);
    return key.toUpperCase();
  }, 2);
  assert.equal(upper('a'), 'A');
  assert.equal(upper('b'), 'B');
  assert.equal(upper('a'), 'A');
  assert.deepEqual(asked, ['a', 'b'], 'a second ask is remembered');
  // c pushes out b, the least recently used (a was used after it).
  assert.equal(upper('c'), 'C');
  assert.equal(upper('a'), 'A');
  assert.equal(upper('b'), 'B');
  assert.deepEqual(asked, ['a', 'b', 'c', 'b']);
});
