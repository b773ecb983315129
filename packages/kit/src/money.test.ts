import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { amountDecimals, formatAmount, maxAmountMicros, microsPerUnit, parseAmount } from './money.ts';

/** The micros of an amount that must parse; fails the test with the reason otherwise. */
function micros(input: string, options?: { allowZero?: boolean }): bigint {
  const result = parseAmount(input, options);
  assert.ok(result.ok, `expected ${JSON.stringify(input)} to parse, got: ${result.ok ? '' : result.reason}`);
  return result.micros;
}

/** The reason an amount is refused; fails the test if it parses. */
function refusal(input: unknown, options?: { allowZero?: boolean }): string {
  const result = parseAmount(input, options);
  assert.equal(result.ok, false, `expected ${String(input)} to be refused`);
  return result.ok ? '' : result.reason;
}

describe('money constants', () => {
  it('has 6 decimals, 10^6 micros per unit and a maximum of 10^9 units that leaves int8 room for 9223 maximal sums', () => {
    assert.equal(amountDecimals, 6);
    assert.equal(microsPerUnit, 1_000_000n);
    assert.equal(maxAmountMicros, 10n ** 15n);
    assert.equal((2n ** 63n - 1n) / maxAmountMicros, 9223n);
  });
});

describe('parseAmount accepts plain decimals', () => {
  it('parses integers and decimals into micros', () => {
    assert.equal(micros('1'), 1_000_000n);
    assert.equal(micros('1.5'), 1_500_000n);
    assert.equal(micros('12.345678'), 12_345_678n);
    assert.equal(micros('0.5'), 500_000n);
    assert.equal(micros('10'), 10_000_000n);
  });

  it('accepts 1 to 6 decimal places, trailing zeros included', () => {
    assert.equal(micros('0.1'), 100_000n);
    assert.equal(micros('1.500000'), 1_500_000n);
    assert.equal(micros('0.000001'), 1n);
  });

  it('accepts exactly the maximum, spelled with and without decimals', () => {
    assert.equal(micros('1000000000'), maxAmountMicros);
    assert.equal(micros('1000000000.000000'), maxAmountMicros);
    assert.equal(micros('999999999.999999'), maxAmountMicros - 1n);
  });

  it('accepts zero only with allowZero', () => {
    assert.equal(micros('0', { allowZero: true }), 0n);
    assert.equal(micros('0.000000', { allowZero: true }), 0n);
    assert.equal(refusal('0'), 'amount must be greater than zero');
    assert.equal(refusal('0.000000'), 'amount must be greater than zero');
    assert.equal(refusal('0', { allowZero: false }), 'amount must be greater than zero');
  });
});

describe('parseAmount refuses, naming the problem', () => {
  it('refuses non-strings', () => {
    assert.equal(refusal(1), 'amount must be a decimal string, got a number');
    assert.equal(refusal(1.5), 'amount must be a decimal string, got a number');
    assert.equal(refusal(1n), 'amount must be a decimal string, got a bigint');
    assert.equal(refusal(null), 'amount must be a decimal string, got null');
    assert.equal(refusal(undefined), 'amount must be a decimal string, got undefined');
    assert.equal(refusal({ amount: '1' }), 'amount must be a decimal string, got an object');
    assert.equal(refusal(['1']), 'amount must be a decimal string, got an array');
    assert.equal(refusal(true), 'amount must be a decimal string, got a boolean');
  });

  it('refuses the empty string', () => {
    assert.equal(refusal(''), 'amount is empty');
  });

  it('refuses leading, trailing and inner whitespace of any kind', () => {
    for (const input of [' 1', '1 ', '1 000', '1\t', '\n1', '1.\u00a05', '\u20031']) {
      assert.equal(refusal(input), 'amount must not contain whitespace', JSON.stringify(input));
    }
  });

  it('refuses signs', () => {
    for (const input of ['-1', '+1', '-0', '-0.5', '+1e3']) assert.equal(refusal(input, { allowZero: true }), 'amount must not carry a sign', input);
  });

  it('refuses exponents', () => {
    for (const input of ['1e3', '1E3', '1.5e-3', '1e+3', '.5e1']) assert.equal(refusal(input), 'amount must not use an exponent; write it out in full', input);
  });

  it('refuses a 7th decimal place, even a zero', () => {
    const reason = 'amount has more than 6 decimal places';
    assert.equal(refusal('0.0000001'), reason);
    assert.equal(refusal('1.5000000'), reason);
    assert.equal(refusal('0.0000000', { allowZero: true }), reason);
  });

  it('refuses a leading or trailing dot and more than one dot', () => {
    assert.equal(refusal('.5'), 'amount needs a digit before the decimal point, as in 0.5');
    assert.equal(refusal('5.'), 'amount needs digits after the decimal point, or no decimal point');
    assert.equal(refusal('.'), 'amount needs a digit before the decimal point, as in 0.5');
    assert.equal(refusal('1.2.3'), 'amount has more than one decimal point');
  });

  it('refuses leading zeros but not a single zero before the point', () => {
    assert.equal(refusal('007'), 'amount must not have leading zeros');
    assert.equal(refusal('00.5'), 'amount must not have leading zeros');
    assert.equal(refusal('01'), 'amount must not have leading zeros');
    assert.equal(micros('0.5'), 500_000n);
  });

  it('refuses thousands separators and decimal commas', () => {
    const reason = "amount must not contain separators such as ',' or '_'; use '.' only before the decimals";
    for (const input of ['1,000', '1,000.50', '1_000', "1'000", '1,5']) assert.equal(refusal(input), reason, input);
  });

  it('refuses non-ASCII digits', () => {
    for (const input of ['١٢٣', '１２', '१.५', '٣']) assert.equal(refusal(input), 'amount must use ASCII digits 0-9', input);
  });

  it('refuses anything else that is not a decimal', () => {
    for (const input of ['abc', '0x10', 'Infinity', 'NaN', '1a', '$1', '1\u200b', '1/2']) {
      assert.equal(refusal(input), 'amount must be a decimal number such as 12.5', input);
    }
  });

  it('refuses one micro above the maximum, and far larger values up to a million digits', () => {
    const reason = 'amount is above the maximum of 1000000000.000000';
    assert.equal(refusal('1000000000.000001'), reason);
    assert.equal(refusal('1000000001'), reason);
    assert.equal(refusal('9999999999.999999'), reason);
    assert.equal(refusal('10000000000'), reason);
    assert.equal(refusal('9'.repeat(1_000_000)), reason);
  });
});

describe('formatAmount', () => {
  it('writes exactly 6 decimal places', () => {
    assert.equal(formatAmount(1_500_000n), '1.500000');
    assert.equal(formatAmount(0n), '0.000000');
    assert.equal(formatAmount(1n), '0.000001');
    assert.equal(formatAmount(999_999n), '0.999999');
    assert.equal(formatAmount(12_345_678n), '12.345678');
    assert.equal(formatAmount(maxAmountMicros), '1000000000.000000');
  });

  it('formats values above the input maximum (a sum of balances) without loss', () => {
    assert.equal(formatAmount(2n ** 63n - 1n), '9223372036854.775807');
  });

  it('throws for a negative amount or a non-bigint (programming errors)', () => {
    assert.throws(() => formatAmount(-1n), RangeError);
    assert.throws(() => formatAmount(1 as unknown as bigint), TypeError);
  });
});

describe('parseAmount and formatAmount round trip', () => {
  // A seeded LCG (Knuth's MMIX constants) so a failure reproduces exactly.
  function lcg(seed: bigint): () => bigint {
    let state = seed;
    return () => {
      state = (state * 6364136223846793005n + 1442695040888963407n) & (2n ** 64n - 1n);
      return state;
    };
  }

  it('formats and parses back 2000 seeded values across the whole range, and every value formats to 6 places', () => {
    const next = lcg(20240601n);
    for (let i = 0; i < 2000; i++) {
      // Alternate the full range with small values, where the fraction padding matters most.
      const value = i % 2 === 0 ? next() % (maxAmountMicros + 1n) : next() % 10_000_000n;
      const text = formatAmount(value);
      assert.match(text, /^(0|[1-9][0-9]*)\.[0-9]{6}$/);
      assert.equal(micros(text, { allowZero: true }), value, text);
    }
  });

  it('parses and formats back seeded decimals with 0 to 6 places to the padded spelling', () => {
    const next = lcg(7n);
    for (let i = 0; i < 1000; i++) {
      const whole = (next() % 1_000_000_000n).toString();
      const places = Number(next() % 7n);
      const fraction = (next() % 10n ** BigInt(places)).toString().padStart(places, '0');
      const text = places === 0 ? whole : `${whole}.${fraction}`;
      const parsed = parseAmount(text, { allowZero: true });
      assert.ok(parsed.ok, text);
      assert.equal(formatAmount(parsed.micros), `${whole}.${fraction.padEnd(6, '0')}`);
    }
  });
});
