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
});
