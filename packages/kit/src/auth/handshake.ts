import type { Clock } from '../clock.ts';
import { unixSeconds } from '../clock.ts';
import { parseDid } from './did.ts';
import { publicKeyFromHex, verifyMessage } from './ed25519.ts';
import type { NonceStore } from './nonce-store.ts';
import { mintPrincipalToken } from './principal-token.ts';

export const challengeLifetimeSeconds = 120;
export const principalTokenLifetimeSeconds = 86400;

/** The message an agent signs: `platform-<service>-auth:<did>:<nonce>`. */
export function challengeMessage(service: string, did: string, nonce: string): string {
  return `platform-${service}-auth:${did}:${nonce}`;
}

export interface HandshakeDeps {
  service: string;
  nonces: NonceStore;
  tokenKey: Buffer;
  clock: Clock;
}

export type ChallengeResult =
  | { ok: true; challenge: { did: string; nonce: string; message: string; expires_in: number } }
  | { ok: false; error: 'invalid_did' };

/** Issues a challenge for a well-formed DID. */
export async function issueChallenge(deps: HandshakeDeps, did: string): Promise<ChallengeResult> {
  if (!parseDid(did)) return { ok: false, error: 'invalid_did' };
  const nonce = await deps.nonces.issue(did, challengeLifetimeSeconds);
  return { ok: true, challenge: { did, nonce, message: challengeMessage(deps.service, did, nonce), expires_in: challengeLifetimeSeconds } };
}

export interface VerifyRequest {
  did: string;
  public_key: string;
  nonce: string;
  signature: string;
}

export type VerifyResult =
  | { ok: true; session: { token: string; owner_user_id: string; expires_in: number } }
  | { ok: false; error: 'unauthorized' | 'invalid_did'; reason: string };

/**
 * Verifies a signed challenge and mints a principal token. Checks run cheapest first and the nonce
 * is consumed last, so a request with a bad key or signature cannot burn someone else's nonce.
 */
export async function verifyChallenge(deps: HandshakeDeps, request: VerifyRequest): Promise<VerifyResult> {
  const publicKey = publicKeyFromHex(request.public_key);
  if (!publicKey) return { ok: false, error: 'unauthorized', reason: 'public_key is not a 32-byte ed25519 key in hex' };
  const message = challengeMessage(deps.service, request.did, request.nonce);
  if (!verifyMessage(publicKey, message, request.signature)) {
    return { ok: false, error: 'unauthorized', reason: 'signature does not verify over the challenge message' };
  }
  const parsed = parseDid(request.did);
  if (!parsed) return { ok: false, error: 'invalid_did', reason: 'did is malformed' };
  if (request.public_key.slice(0, 16).toLowerCase() !== parsed.keyFingerprint.toLowerCase()) {
    return { ok: false, error: 'unauthorized', reason: 'public key does not match the DID key fingerprint' };
  }
  if (!(await deps.nonces.consume(request.nonce, request.did))) {
    return { ok: false, error: 'unauthorized', reason: 'nonce is unknown, expired, already used or bound to another DID' };
  }
  const expiresAt = unixSeconds(deps.clock.now()) + principalTokenLifetimeSeconds;
  const token = mintPrincipalToken(deps.tokenKey, { did: parsed.did, owner: parsed.owner, expiresAt });
  return { ok: true, session: { token, owner_user_id: parsed.owner, expires_in: principalTokenLifetimeSeconds } };
}
