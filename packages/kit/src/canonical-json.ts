import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-text.ts';

export { canonicalJson } from './canonical-text.ts';

/** SHA-256 hex of a value's canonical JSON: equal for requests that mean the same thing. */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}
