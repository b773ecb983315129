import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultModelIds } from '@platform/kit/model-labels';
import { defaultEmbeddingModel, defaultRateCardDir } from '../config.ts';
import { cardDigest, parseRateCard, readRateCardDir } from './rate-card-file.ts';

const valid = { version: 3, usd_per_credit: '0.01', models: { 'accounts/p/models/m': { input_usd_per_mtok: '0.2', output_usd_per_mtok: '0.4' } } };

describe('rate card files', () => {
  test("the repository's cards parse, and the newest prices every default model", () => {
    const cards = readRateCardDir(defaultRateCardDir);
    const newest = cards.at(-1)?.card;
    assert.ok(newest);
    for (const model of [...Object.values(defaultModelIds), defaultEmbeddingModel]) assert.ok(newest.prices.has(model), `${model} is priced`);
    assert.deepEqual(
      cards.map((card) => card.card.version),
      cards.map((_, index) => index + 1),
      'versions run 1, 2, … with no gap',
    );
  });

  test('prices are exact integers of pico-USD', () => {
    const { card } = parseRateCard(JSON.stringify(valid), 'v3.json', 3);
    assert.equal(card.usdPerCreditPico, 10_000_000_000n);
    assert.deepEqual(card.prices.get('accounts/p/models/m'), { inputPicoUsdPerMTok: 200_000_000_000n, outputPicoUsdPerMTok: 400_000_000_000n });
  });

  test('the digest ignores formatting but not prices', () => {
    const a = parseRateCard(JSON.stringify(valid), 'v3.json');
    const b = parseRateCard(JSON.stringify(valid, null, 2), 'v3.json');
    const c = parseRateCard(
      JSON.stringify({ ...valid, models: { 'accounts/p/models/m': { input_usd_per_mtok: '0.20', output_usd_per_mtok: '0.4' } } }),
      'v3.json',
    );
    const d = parseRateCard(JSON.stringify({ ...valid, usd_per_credit: '0.02' }), 'v3.json');
    assert.equal(a.contentSha256, b.contentSha256);
    assert.equal(a.contentSha256, c.contentSha256, '0.2 and 0.20 are the same price');
    assert.notEqual(a.contentSha256, d.contentSha256);
    assert.equal(cardDigest(a.card), a.contentSha256);
  });

  test('malformed cards are refused with the file and the problem named', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ ...valid, version: 0 }, /version must be a positive integer/],
      [{ ...valid, usd_per_credit: '0' }, /usd_per_credit must be above zero/],
      [{ ...valid, usd_per_credit: 0.01 }, /usd_per_credit must be a decimal string/],
      [{ ...valid, models: {} }, /prices no model/],
      [{ ...valid, models: { 'gpt-4o': { input_usd_per_mtok: '1', output_usd_per_mtok: '1' } } }, /accounts\/<provider>\/models\/<model>/],
      [{ ...valid, models: { 'accounts/p/models/m': { input_usd_per_mtok: '1' } } }, /output_usd_per_mtok must be a decimal string/],
      [{ ...valid, models: { 'accounts/p/models/m': { input_usd_per_mtok: '1', output_usd_per_mtok: '1', cached: '1' } } }, /unknown field "cached"/],
      [{ ...valid, usd_per_credits: '1' }, /unknown field "usd_per_credits"/],
    ];
    for (const [card, reason] of bad) assert.throws(() => parseRateCard(JSON.stringify(card), 'v3.json'), reason, JSON.stringify(card));
    assert.throws(() => parseRateCard(JSON.stringify(valid), 'v4.json', 4), /version is 3 but the file name says 4/);
    assert.throws(() => parseRateCard('{', 'v3.json'), /rate card v3.json: not valid JSON/);
  });
});
