import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inputProblem, isStorableText, maxInputDepth } from './input-text.ts';

const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { a: value };
  return value;
};

test('storable text: no NUL, no lone surrogate; a surrogate pair (an emoji) is fine', () => {
  assert.equal(isStorableText('plain'), true);
  assert.equal(isStorableText('emoji 😀 and ü'), true);
  assert.equal(isStorableText('a\u0000b'), false);
  assert.equal(isStorableText('\ud800'), false);
  assert.equal(isStorableText('x\udc00'), false);
  assert.equal(isStorableText('\ud83d\ude00'), true);
});

test('a problem names the field as Fastify names it, wherever it sits', () => {
  const problem = inputProblem({ to: 'did', args: [{ ok: 'x' }, { name: 'a\u0000b' }] }, 'body');
  assert.equal(problem?.code, 'invalid_request');
  assert.equal(problem?.message, 'args[1].name must not contain NUL (U+0000)');
  assert.deepEqual(problem?.details, { field: 'args[1].name' });
  assert.equal(
    inputProblem({ did: 'did:platform:\ud800:00' }, 'params')?.message,
    'path parameter did must be well-formed Unicode (it holds a lone surrogate)',
  );
  assert.equal(inputProblem({ did: 'a\u0000' }, 'querystring')?.message, 'query parameter did must not contain NUL (U+0000)');
  assert.equal(inputProblem({ 'k\u0000ey': 1 }, 'body')?.message, 'k\ufffdey must not contain NUL (U+0000)');
  assert.equal(inputProblem('\ud800', 'body')?.message, 'the body must be well-formed Unicode (it holds a lone surrogate)');
  assert.equal(inputProblem({ ok: ['x', 1, null, true, { y: 'z' }] }, 'body'), undefined);
});

test('nesting: the limit itself is accepted, one more level is refused, 20,000 levels do not overflow the check', () => {
  assert.equal(inputProblem(nested(maxInputDepth), 'body'), undefined);
  assert.equal(inputProblem(nested(maxInputDepth + 1), 'body')?.message, `the body is nested deeper than ${maxInputDepth} levels`);
  let deep: unknown = [];
  for (let level = 0; level < 20_000; level++) deep = [deep];
  assert.equal(inputProblem(deep, 'body')?.code, 'invalid_request');
});
