import { hash } from 'node:crypto';
import { canonicalJson } from './canonical-text.ts';

export { canonicalJson } from './canonical-text.ts';

/** SHA-256 hex of a value's canonical JSON: equal for requests that mean the same thing. */
export function canonicalHash(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'hex');
}
