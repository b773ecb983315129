/**
 * Money: decimal strings on the wire (at most 6 places in, exactly 6 out), integer micro-units as
 * `bigint` inside. Never a floating-point number: 0.1 + 0.2 !== 0.3, and a balance must add up to the cent.
 */

/** Decimal places of the settlement unit; one unit is 10^6 micros. */
export const amountDecimals = 6;
export const microsPerUnit = 1_000_000n;

/**
 * The largest amount accepted: 10^9 units (one billion), i.e. 10^15 micros.
 *
 * Micros are stored as PostgreSQL `bigint` (int8, at most 9.22 * 10^18), which caps any stored value,
 * a total supply included, at about 9.2 * 10^12 units. 10^12 units (10^18 micros) would leave room
 * for only 9 maximal values in one sum; 10^9 units leaves room for 9223, far more than any one account
 * or batch plausibly holds at the maximum, while still being far above any single agent payment.
 * Services should bound balances by the same constant (a CHECK constraint) so every sum they store of
 * up to 9223 balances fits int8. (PostgreSQL's own `sum(bigint)` returns numeric, so the aggregate
 * cannot overflow; writing it back into an int8 column or reading it as int8 can.)
 */
export const maxAmountMicros = 1_000_000_000n * microsPerUnit;

/** The result of parsing an amount: micros, or why the text is refused. */
export type AmountParse = { ok: true; micros: bigint } | { ok: false; reason: string };

const maxIntegerDigits = (maxAmountMicros / microsPerUnit).toString().length;
const decimalShape = /^([0-9]+)(?:\.([0-9]+))?$/;
const aboveMaximum = `amount is above the maximum of ${formatAmount(maxAmountMicros)}`;

function describeType(input: unknown): string {
  if (input === null || input === undefined) return String(input);
  if (Array.isArray(input)) return 'an array';
  return typeof input === 'object' ? 'an object' : `a ${typeof input}`;
}

/** The first problem with a string that is not a plain decimal, named as precisely as we can. */
function shapeProblem(input: string): string {
  if (/\s/u.test(input)) return 'amount must not contain whitespace';
  if (/^[+-]/.test(input)) return 'amount must not carry a sign';
  if (/^[0-9.]+[eE][+-]?[0-9]+$/.test(input)) return 'amount must not use an exponent; write it out in full';
  if (/[,_']/.test(input)) return "amount must not contain separators such as ',' or '_'; use '.' only before the decimals";
  // \p{Nd} is every script's decimal digits: a lookalike such as '١' or '５' would otherwise get a vague reason.
  if (/(?![0-9])\p{Nd}/u.test(input)) return 'amount must use ASCII digits 0-9';
  if ((input.match(/\./g) ?? []).length > 1) return 'amount has more than one decimal point';
  if (input.startsWith('.')) return 'amount needs a digit before the decimal point, as in 0.5';
  if (input.endsWith('.')) return 'amount needs digits after the decimal point, or no decimal point';
  return 'amount must be a decimal number such as 12.5';
}

/**
 * Parses a decimal amount of the settlement unit into micros. Expected failures are returned, each with
 * a reason that names the problem; zero is refused unless `allowZero`.
 *
 * @example parseAmount('1.5') // { ok: true, micros: 1500000n }
 * @example parseAmount('1e3') // { ok: false, reason: 'amount must not use an exponent; write it out in full' }
 */
export function parseAmount(input: unknown, options?: { allowZero?: boolean }): AmountParse {
  if (typeof input !== 'string') return { ok: false, reason: `amount must be a decimal string, got ${describeType(input)}` };
  if (input === '') return { ok: false, reason: 'amount is empty' };
  const match = decimalShape.exec(input);
  if (!match) return { ok: false, reason: shapeProblem(input) };
  const whole = match[1] as string;
  const fraction = match[2] ?? '';
  // One spelling per value for the integer part: `007` is refused, `0.5` is fine.
  if (whole.length > 1 && whole.startsWith('0')) return { ok: false, reason: 'amount must not have leading zeros' };
  if (fraction.length > amountDecimals) return { ok: false, reason: `amount has more than ${amountDecimals} decimal places` };
  // Checked before BigInt so a megabyte of digits costs nothing to refuse.
  if (whole.length > maxIntegerDigits) return { ok: false, reason: aboveMaximum };
  const micros = BigInt(whole) * microsPerUnit + BigInt(fraction.padEnd(amountDecimals, '0'));
  if (micros > maxAmountMicros) return { ok: false, reason: aboveMaximum };
  if (micros === 0n && options?.allowZero !== true) return { ok: false, reason: 'amount must be greater than zero' };
  return { ok: true, micros };
}

/**
 * Formats micros as a decimal string with exactly 6 places. A negative amount is a programming
 * error (debits are separate operations, never negative amounts), so it throws.
 *
 * @example formatAmount(1500000n) // '1.500000'
 */
export function formatAmount(micros: bigint): string {
  if (typeof micros !== 'bigint') throw new TypeError('formatAmount takes micros as a bigint');
  if (micros < 0n) throw new RangeError(`formatAmount got a negative amount: ${micros} micros`);
  const fraction = (micros % microsPerUnit).toString().padStart(amountDecimals, '0');
  return `${micros / microsPerUnit}.${fraction}`;
}
