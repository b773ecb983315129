import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time string comparison. Both sides are hashed first so that neither the content
 * nor the length of the secret leaks through timing. One-shot hash(): createHash() made a native Hash object per
 * side, which every request's bearer check left for the young generation's collector to finalise.
 *
 * @example safeEqual(presentedToken, configuredToken)
 */
export function safeEqual(presented: string, expected: string): boolean {
  const a = hash('sha256', presented, 'buffer');
  const b = hash('sha256', expected, 'buffer');
  return timingSafeEqual(a, b);
}
