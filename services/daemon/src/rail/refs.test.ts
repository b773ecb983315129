import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findRefs, resolveRefs } from './refs.ts';

test('refs are found with their JSON pointer and resolved through objects and arrays', () => {
  const args = { to: { $ref: 'who.people.1.did' }, note: 'hi', list: [{ $ref: 'count' }], nested: { a: { $ref: 'who' } } };
  assert.deepEqual(findRefs(args), [
    { pointer: '/to', step: 'who', path: ['people', '1', 'did'] },
    { pointer: '/list/0', step: 'count', path: [] },
    { pointer: '/nested/a', step: 'who', path: [] },
  ]);
  const results = new Map<string, unknown>([
    ['who', { people: [{ did: 'a' }, { did: 'b' }] }],
    ['count', 3],
  ]);
  assert.deepEqual(resolveRefs(args, results), {
    ok: true,
    value: { to: 'b', note: 'hi', list: [3], nested: { a: { people: [{ did: 'a' }, { did: 'b' }] } } },
  });
  assert.deepEqual(resolveRefs({ x: { $ref: 'who.people.5.did' } }, results), { ok: false, problem: '$ref who.people.5.did: the result has no "5"' });
  assert.deepEqual(resolveRefs({ x: { $ref: 'nobody' } }, results), { ok: false, problem: '$ref nobody: step "nobody" has no result' });
  assert.deepEqual(resolveRefs({ x: { $ref: 'who.constructor' } }, results), { ok: false, problem: '$ref who.constructor: the result has no "constructor"' });
  // An object with $ref and other keys is data, not a ref.
  assert.deepEqual(findRefs({ x: { $ref: 'who', other: 1 } }), []);
});
