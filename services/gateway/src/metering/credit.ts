/**
 * Credits and USD prices as fixed-point integers: never a floating-point number.
 *
 * - A credit amount is `bigint` units of 10^-12 credit inside, and a decimal string with exactly 12 places
 *   outside (`formatCredit`), as the spec's "fixed-point decimals with 12 places" asks.
 * - A USD price is `bigint` pico-dollars (10^-12 USD), so any price written with up to 12 decimals is exact.
 */

export const creditDecimals = 12;
export const unitsPerCredit = 10n ** 12n;
/** The largest credit amount accepted anywhere (a cap, a setting): 10^6 credits, far inside int8 for sums. */
export const maxCreditUnits = 1_000_000n * unitsPerCredit;
/** The largest USD figure a rate card may hold (per million tokens, or per credit). */
export const maxUsdPico = 1_000_000n * 10n ** 12n;

export type DecimalParse = { ok: true; value: bigint } | { ok: false; reason: string };

const decimalShape = /^(0|[1-9][0-9]{0,15})(?:\.([0-9]{1,12}))?$/;

/**
 * Parses a plain decimal with at most 12 places into units of 10^-12 (no sign, exponent, spaces or leading zeros).
 *
 * @example parseDecimal12('1.5', 'limit_credit') // { ok: true, value: 1500000000000n }
 */
export function parseDecimal12(text: unknown, field: string, max: bigint): DecimalParse {
  if (typeof text !== 'string') return { ok: false, reason: `${field} must be a decimal string such as "2.5"` };
  const match = decimalShape.exec(text);
  if (!match) return { ok: false, reason: `${field} must be a plain decimal with at most ${creditDecimals} places, such as "2.5", got "${text.slice(0, 40)}"` };
  const value = BigInt(match[1] as string) * unitsPerCredit + BigInt((match[2] ?? '').padEnd(creditDecimals, '0'));
  if (value > max) return { ok: false, reason: `${field} is above the maximum of ${formatCredit(max)}` };
  return { ok: true, value };
}

/**
 * Units of 10^-12 as a decimal string with exactly 12 places.
 *
 * @example formatCredit(1500000000000n) // '1.500000000000'
 */
export function formatCredit(units: bigint): string {
  if (units < 0n) throw new RangeError(`credit amounts are never negative, got ${units}`);
  const whole = units / unitsPerCredit;
  const fraction = (units % unitsPerCredit).toString().padStart(creditDecimals, '0');
  return `${whole}.${fraction}`;
}

/** A model's price in pico-USD per million tokens. */
export interface ModelPrice {
  readonly inputPicoUsdPerMTok: bigint;
  readonly outputPicoUsdPerMTok: bigint;
}

/**
 * The cost of a call in credit units: (input tokens × input price + output tokens × output price) converted at the
 * card's USD-per-credit reference, rounded up once per call to the next 10^-12 credit, so the platform never
 * undercharges by more than nothing and overcharges by less than one unit.
 *
 * units = ceil(Σ tokens × picoUsdPerMTok × 10^12 / (10^6 × usdPerCreditPico))
 *
 * @example costUnits({ inputPicoUsdPerMTok: 10n ** 12n, outputPicoUsdPerMTok: 0n }, 10n ** 10n, 1000, 0) // 0.1 credit
 */
export function costUnits(price: ModelPrice, usdPerCreditPico: bigint, inputTokens: number, outputTokens: number): bigint {
  const picoUsdTimesMTok = BigInt(inputTokens) * price.inputPicoUsdPerMTok + BigInt(outputTokens) * price.outputPicoUsdPerMTok;
  // × 10^12 (to units) / 10^6 (per million tokens) = × 10^6.
  const numerator = picoUsdTimesMTok * 1_000_000n;
  return (numerator + usdPerCreditPico - 1n) / usdPerCreditPico;
}
