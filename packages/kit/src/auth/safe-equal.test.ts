import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeEqual } from './safe-equal.ts';

describe('safeEqual', () => {
  it('is true for equal strings', () => {
    assert.equal(safeEqual('s3cret-token', 's3cret-token'), true);
  });

  it('is false for different strings of the same length', () => {
    assert.equal(safeEqual('s3cret-token', 's3cret-tokeN'), false);
  });

  it('is false for strings of different lengths, including a prefix', () => {
    assert.equal(safeEqual('s3cret', 's3cret-token'), false);
    assert.equal(safeEqual('s3cret-token', 's3cret'), false);
  });

  it('is true for two empty strings and false for empty against non-empty', () => {
    assert.equal(safeEqual('', ''), true);
    assert.equal(safeEqual('', 'x'), false);
    assert.equal(safeEqual('x', ''), false);
  });

  it('compares non-ASCII text by its UTF-8 bytes', () => {
    assert.equal(safeEqual('grüße', 'grüße'), true);
    assert.equal(safeEqual('grüße', 'grusse'), false);
  });

  it('answers the same for many more secrets than it keeps digests of, each compared again after the others', () => {
    const secrets = Array.from({ length: 40 }, (_, i) => `secret-${i}-${'x'.repeat(i)}`);
    for (let round = 0; round < 2; round++)
      for (const [i, secret] of secrets.entries()) {
        assert.equal(safeEqual(secret, secret), true);
        assert.equal(safeEqual(secrets[(i + 1) % secrets.length] as string, secret), false);
        assert.equal(safeEqual(`${secret}!`, secret), false);
      }
  });
});
