import assert from 'node:assert/strict';
import { test } from 'node:test';
import { remembered } from './remembered.ts';

/** `remembered` over a function that records each key it is asked. */
function upperCounting(max: number) {
  const asked: string[] = [];
  const upper = remembered((key: string) => {
    asked.push(key);
    return key.toUpperCase();
  }, max);
  return { upper, asked };
}

test('answers come from the function once per key, and a key not asked again for two generations leaves', () => {
  const { upper, asked } = upperCounting(2);
  assert.equal(upper('a'), 'A');
  assert.equal(upper('b'), 'B');
  assert.equal(upper('a'), 'A');
  assert.deepEqual(asked, ['a', 'b'], 'a second ask is remembered');
  // a was asked again after the first generation filled, b was not: c's generation keeps a and lets b go.
  assert.equal(upper('c'), 'C');
  assert.equal(upper('a'), 'A');
  assert.equal(upper('b'), 'B');
  assert.deepEqual(asked, ['a', 'b', 'c', 'b']);
});

test('at most twice the bound is held, and a key asked often stays however many others pass', () => {
  const { upper, asked } = upperCounting(10);
  for (let i = 0; i < 1_000; i++) {
    upper('hot');
    upper(`cold-${i}`);
  }
  assert.equal(asked.filter((key) => key === 'hot').length, 1, 'the key asked every other time was derived once');
  // The last cold keys are still held (in the young or the old generation)...
  const before = asked.length;
  for (let i = 995; i < 1_000; i++) upper(`cold-${i}`);
  assert.equal(asked.length, before, 'the most recent keys are remembered');
  // ...and the first ones long gone: each is derived again.
  for (let i = 0; i < 10; i++) upper(`cold-${i}`);
  assert.equal(asked.length - before, 10);
});

test('after twice the bound of other keys, a key is derived again', () => {
  const { upper, asked } = upperCounting(10);
  for (let i = 0; i <= 20; i++) upper(`key-${i}`);
  upper('key-0');
  assert.equal(asked.filter((key) => key === 'key-0').length, 2, 'no more than 2 × 10 answers are held');
  // The most recent are held.
  const before = asked.length;
  upper('key-20');
  upper('key-0');
  assert.equal(asked.length, before);
});

test('an answer that is undefined is remembered too', () => {
  let calls = 0;
  const nothing = remembered(() => {
    calls++;
    return undefined;
  }, 4);
  nothing('x');
  nothing('x');
  assert.equal(calls, 1);
});
