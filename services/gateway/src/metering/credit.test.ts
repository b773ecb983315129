import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { costUnits, formatCredit, maxCreditUnits, parseDecimal12, unitsPerCredit } from './credit.ts';

const usd = (text: string) => {
  const parsed = parseDecimal12(text, 'usd', 10n ** 30n);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.value;
};

describe('credit amounts', () => {
  test('format always writes 12 places', () => {
    assert.equal(formatCredit(0n), '0.000000000000');
    assert.equal(formatCredit(1n), '0.000000000001');
    assert.equal(formatCredit(10n * unitsPerCredit), '10.000000000000');
    assert.equal(formatCredit(1_234_567_890_123_456n), '1234.567890123456');
    assert.throws(() => formatCredit(-1n), RangeError);
  });

  test('parse takes plain decimals up to 12 places and refuses anything else', () => {
    assert.deepEqual(parseDecimal12('2.5', 'x', maxCreditUnits), { ok: true, value: 2_500_000_000_000n });
    assert.deepEqual(parseDecimal12('0', 'x', maxCreditUnits), { ok: true, value: 0n });
    assert.deepEqual(parseDecimal12('0.000000000001', 'x', maxCreditUnits), { ok: true, value: 1n });
    for (const bad of ['', '-1', '1e3', '01', '1.', '.5', ' 1', '1.0000000000001', 'NaN', '1,5', 2, null]) {
      assert.equal(parseDecimal12(bad, 'limit_credit', maxCreditUnits).ok, false, JSON.stringify(bad));
    }
    const tooBig = parseDecimal12('1000000.000000000001', 'limit_credit', maxCreditUnits);
    assert.equal(tooBig.ok, false);
    assert.match((tooBig as { reason: string }).reason, /limit_credit is above the maximum/);
  });
});

describe('cost of a call', () => {
  test('1 USD per million tokens at 0.01 USD per credit: one token costs 0.0001 credit exactly', () => {
    const price = { inputPicoUsdPerMTok: usd('1'), outputPicoUsdPerMTok: usd('2') };
    assert.equal(formatCredit(costUnits(price, usd('0.01'), 1, 0)), '0.000100000000');
    assert.equal(formatCredit(costUnits(price, usd('0.01'), 1000, 500)), '0.200000000000');
    assert.equal(costUnits(price, usd('0.01'), 0, 0), 0n);
  });

  test('a fraction of a unit rounds up once per call, never down', () => {
    // 1 token at 0.1 USD/Mtok with 0.03 USD per credit = 1/300000 credit = 3333333.33… units.
    const price = { inputPicoUsdPerMTok: usd('0.1'), outputPicoUsdPerMTok: 0n };
    assert.equal(costUnits(price, usd('0.03'), 1, 0), 3_333_334n);
    assert.equal(costUnits(price, usd('0.03'), 3, 0), 10_000_000n, 'exact results are not bumped');
  });

  test('large counts stay exact (no floating point anywhere)', () => {
    const price = { inputPicoUsdPerMTok: usd('0.000000000001'), outputPicoUsdPerMTok: usd('999999.999999999999') };
    const units = costUnits(price, usd('0.000000000001'), 2 ** 31, 2 ** 31);
    assert.equal(units, (2n ** 31n * 1n + 2n ** 31n * 999_999_999_999_999_999n) * 1_000_000n);
  });
});
