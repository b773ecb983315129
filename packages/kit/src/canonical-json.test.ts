import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import canonicalize from 'canonicalize';
import { canonicalHash, canonicalJson } from './canonical-json.ts';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys and writes numbers in their shortest form', () => {
    assert.equal(canonicalJson({ b: 1, a: [1e3, 0.1] }), '{"a":[1000,0.1],"b":1}');
  });

  it('sorts nested object keys but keeps array order', () => {
    assert.equal(canonicalJson({ z: { y: 1, x: 2 }, a: [3, 1, 2] }), '{"a":[3,1,2],"z":{"x":2,"y":1}}');
  });

  it('sorts keys by UTF-16 code units (uppercase before lowercase, shorter prefix first)', () => {
    assert.equal(canonicalJson({ b: 1, B: 2, a: 3, aa: 4 }), '{"B":2,"a":3,"aa":4,"b":1}');
  });

  it('writes the ECMAScript number forms the RFC requires', () => {
    assert.equal(canonicalJson([1e21, 1e-7, -0, 1.5e-6, 100.0, 4.5]), '[1e+21,1e-7,0,0.0000015,100,4.5]');
  });

  it('emits no whitespace and escapes strings minimally', () => {
    assert.equal(canonicalJson({ text: 'a"b\\c\n€' }), '{"text":"a\\"b\\\\c\\n€"}');
  });

  it('drops undefined properties like JSON.stringify', () => {
    assert.equal(canonicalJson({ a: 1, b: undefined }), '{"a":1}');
  });

  it('throws for a value that has no JSON form', () => {
    assert.throws(() => canonicalJson(undefined));
  });
});

describe('canonicalHash', () => {
  it('is the SHA-256 hex of the canonical JSON', () => {
    const value = { b: 1, a: [1e3, 0.1] };
    assert.equal(canonicalHash(value), createHash('sha256').update('{"a":[1000,0.1],"b":1}', 'utf8').digest('hex'));
  });

  it('is the same for objects whose keys are in a different order', () => {
    assert.equal(canonicalHash({ label: 'x', when: { tz: 'UTC', at: 5 } }), canonicalHash({ when: { at: 5, tz: 'UTC' }, label: 'x' }));
  });

  it('is the same for numbers written differently but equal in value', () => {
    assert.equal(canonicalHash({ n: 1000 }), canonicalHash({ n: 1e3 }));
  });

  it('differs when a value differs', () => {
    assert.notEqual(canonicalHash({ a: 1, b: 2 }), canonicalHash({ a: 1, b: 3 }));
    assert.notEqual(canonicalHash({ a: '1' }), canonicalHash({ a: 1 }));
    assert.notEqual(canonicalHash([1, 2]), canonicalHash([2, 1]));
  });
});

describe('canonicalJson of records (written directly)', () => {
  const samples: unknown[] = [
    { v: 1, seq: 42, kind: 'capture', from: 'did:platform:a:0123456789abcdef', to: null, amount: '12.500000', ref: 'order-42', hold_id: null },
    { b: 'x', B: 'y', a: 3, aa: true, '€': 'ü', é: false, '': 0 },
    { text: 'a"b\\c\n\u0001\u2028€😀', n: -0, big: 1e21, small: 1.5e-6 },
    {},
    { signature: 'ab', intent: { version: 1, to: 'did:x', from: 'did:y', nested: { z: null, a: [1] } }, public_key: 'cd' },
    { z: { y: { x: { w: 'deep' } } }, a: { b: 1.5, c: false } },
  ];
  it('writes the same bytes as the RFC 8785 library', () => {
    for (const sample of samples) assert.equal(canonicalJson(sample), canonicalize(sample));
  });

  it('leaves to the library what is not a record of primitives and records (arrays, undefined dropped, lone surrogates refused)', () => {
    assert.equal(canonicalJson({ a: 1, b: undefined, c: { d: 1 } }), '{"a":1,"c":{"d":1}}');
    assert.throws(() => canonicalJson({ a: '\ud800' }));
    assert.throws(() => canonicalJson({ a: Number.NaN }));
    assert.equal(canonicalJson({ at: new Date(0) }), '{"at":"1970-01-01T00:00:00.000Z"}');
  });
});
