/**
 * The caller's reference a payment carries (the settlement intent's `ref`) and its receipt repeats: printable ASCII,
 * at most 200 characters. Apart from settlement-intent.ts (node:crypto) so receipt checks run in a browser too.
 */
export const maxIntentRefLength = 200;

/** Printable ASCII only: a ref is shown and logged, and the signed bytes must not depend on a text encoding. */
export const refPattern = /^[\x20-\x7e]*$/;
