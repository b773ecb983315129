import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeCatalogCursor, decodeRankedCursor, encodeCatalogCursor, encodeRankedCursor } from '../src/discovery/cursor.ts';
import { filtersInput, limitInput, maxPriceInput, minQualityInput } from '../src/discovery/inputs.ts';
import { formatScore, priceTerm } from '../src/discovery/ranking.ts';
import { anyOf, mostOf, queryWords, requiredMatches } from '../src/discovery/text-query.ts';
import { formatQuality, qualityThousandths } from '../src/listings/quality.ts';

const id = '0190b1c2-0000-7000-8000-000000000000';

describe('discovery inputs, cursors and text queries (no database)', () => {
  test('query words: letters and digits only, lower-cased, distinct, so no tsquery syntax gets through', () => {
    assert.deepEqual(queryWords("Translate   LEGAL contracts & (o'Brien) | !x:* translate"), ['translate', 'legal', 'contracts', 'o', 'brien', 'x']);
    assert.deepEqual(queryWords('&|!:*()'), []);
    assert.deepEqual(queryWords('Ｆｕｌｌ width'), ['full', 'width']);
  });

  test('most-of: n − ⌊n/3⌋ lexemes in every combination; any-of: each alone', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 8].map(requiredMatches), [1, 2, 2, 3, 4, 4, 6]);
    assert.equal(mostOf(['a']), "'a'");
    assert.equal(mostOf(['a', 'b']), "('a' & 'b')");
    assert.equal(mostOf(['a', 'b', 'c']), "('a' & 'b') | ('a' & 'c') | ('b' & 'c')");
    assert.equal(mostOf(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']).split(' | ').length, 28);
    assert.equal(anyOf(['a', 'b']), "'a' | 'b'");
  });

  test('cursors round-trip and refuse anything else', () => {
    assert.equal(decodeCatalogCursor(encodeCatalogCursor(id)), id);
    const ranked = { digest: 'abc', score: 912_345, id, mode: 'most' as const };
    assert.deepEqual(decodeRankedCursor(encodeRankedCursor(ranked), 'abc'), ranked);
    assert.throws(() => decodeRankedCursor(encodeRankedCursor(ranked), 'other'), /another query/);
    assert.throws(() => decodeRankedCursor(encodeRankedCursor({ ...ranked, score: 1.5 }), 'abc'), /not one this endpoint issued/);
    assert.throws(() => decodeRankedCursor(encodeRankedCursor({ ...ranked, score: 1_000_001 }), 'abc'), /cursor/);
    assert.throws(() => decodeCatalogCursor(Buffer.from('[1]').toString('base64url')), /cursor/);
    assert.throws(() => decodeCatalogCursor(Buffer.from(JSON.stringify({ c: id, x: 1 })).toString('base64url')), /cursor/);
    assert.throws(() => decodeCatalogCursor('a+b'), /cursor/);
  });

  test('limits, prices and quality floors parse exactly', () => {
    assert.equal(limitInput(undefined), 20);
    assert.equal(limitInput('100'), 100);
    assert.throws(() => limitInput('1e2'), /limit/);
    assert.equal(maxPriceInput('1500'), 1500n);
    assert.equal(maxPriceInput('1000000000000000'), 1_000_000_000_000_000n);
    assert.throws(() => maxPriceInput('1000000000000001'), /max_price_wei/);
    assert.throws(() => maxPriceInput('1.5'), /max_price_wei/);
    assert.equal(minQualityInput('0.9'), 900);
    assert.equal(minQualityInput('1'), 1000);
    assert.equal(minQualityInput('1.000'), 1000);
    assert.throws(() => minQualityInput('1.001'), /min_quality/);
    assert.throws(() => minQualityInput('.5'), /min_quality/);
    assert.deepEqual(filtersInput({}), {});
    assert.deepEqual(filtersInput({ kind: 'model', confidential: 'false', min_uptime_bps: '9500' }), {
      kind: 'model',
      confidential: false,
      minUptimeBps: 9500,
    });
  });

  test('shown numbers: quality rounds half up to 3 places, scores print their millionths, price is log-scaled', () => {
    assert.equal(formatQuality(0.4995), '0.500');
    assert.equal(formatQuality(0.5), '0.500');
    assert.equal(qualityThousandths(0.8183), 818);
    assert.equal(formatScore(912_345), '0.912345');
    assert.equal(formatScore(1_000_000), '1.000000');
    assert.equal(formatScore(7), '0.000007');
    assert.ok(priceTerm(1) > priceTerm(1_000) && priceTerm(1_000) > priceTerm(1_000_000));
    assert.equal(priceTerm(0), 1);
    assert.equal(priceTerm(9_000).toFixed(2), '0.50');
  });
});
