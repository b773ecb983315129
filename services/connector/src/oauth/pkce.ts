import { createHash, randomBytes } from 'node:crypto';

/**
 * A fresh PKCE pair (RFC 7636): a verifier of 32 random bytes as base64url (43 characters, the minimum length, all
 * unreserved characters) and its S256 challenge.
 */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A fresh `state`: 256 random bits, base64url. Only its hash is stored. */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The key a state is stored under. A lookup by this hash is an index probe, not a comparison of secrets byte by
 * byte, so its timing says nothing about the state; and a database read leaks no state that would still work.
 */
export function stateHash(state: string): Buffer {
  return createHash('sha256').update(state, 'utf8').digest();
}
