import { createHmac, createSecretKey, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';

/**
 * Principal tokens: `base64url(payload).base64url(mac)` with payload `<did>|<owner>|<expUnix>` and
 * mac = HMAC-SHA256(key, payload). The key is derived from the service's secret with
 * HKDF-SHA256 (salt: empty, info: `platform-<service>-principal-token-v1`, 32 bytes), so the same
 * secret configured on two services still yields tokens that only their own service accepts.
 */
export interface PrincipalClaims {
  did: string;
  owner: string;
  expiresAt: number;
}

export type TokenCheck = { ok: true; claims: PrincipalClaims } | { ok: false; reason: string };

/** Derives the HMAC key for one service. @example deriveTokenKey(secret, 'scheduler') */
export function deriveTokenKey(secret: string, service: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), `platform-${service}-principal-token-v1`, 32));
}

// createHmac with a raw Buffer imports the key on every call, a large share of a request's CPU on the hot
// path; a KeyObject made once per key skips that. Keyed weakly, so a dropped key takes its KeyObject with it.
const keyObjects = new WeakMap<Buffer, KeyObject>();

function mac(key: Buffer, payload: string): Buffer {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return createHmac('sha256', keyObject).update(payload, 'utf8').digest();
}

/** Mints a token. @example mintPrincipalToken(key, { did, owner, expiresAt: nowUnix + 86400 }) */
export function mintPrincipalToken(key: Buffer, claims: PrincipalClaims): string {
  const payload = `${claims.did}|${claims.owner}|${claims.expiresAt}`;
  return `${Buffer.from(payload, 'utf8').toString('base64url')}.${mac(key, payload).toString('base64url')}`;
}

const base64url = /^[A-Za-z0-9_-]+$/;

function isCanonicalBase64url(part: string): boolean {
  return base64url.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part;
}

/** Verifies a token in the spec's order: format, decoding, MAC (constant-time), payload, expiry, non-empty claims. */
export function verifyPrincipalToken(key: Buffer, token: string, nowUnix: number): TokenCheck {
  const parts = token.split('.');
  if (parts.length !== 2) return { ok: false, reason: 'token format must be payload.mac' };
  const [payloadPart, macPart] = parts as [string, string];
  // Canonical encoding only: Node's decoder ignores stray low bits, so one token could otherwise have several spellings.
  if (!isCanonicalBase64url(payloadPart) || !isCanonicalBase64url(macPart)) return { ok: false, reason: 'token parts are not base64url' };
  const payload = Buffer.from(payloadPart, 'base64url').toString('utf8');
  const presentedMac = Buffer.from(macPart, 'base64url');
  const expectedMac = mac(key, payload);
  if (presentedMac.length !== expectedMac.length || !timingSafeEqual(presentedMac, expectedMac)) {
    return { ok: false, reason: 'token signature does not match' };
  }
  const fields = payload.split('|');
  if (fields.length !== 3 || !/^\d+$/.test(fields[2] as string)) return { ok: false, reason: 'token payload must be did|owner|expUnix' };
  const [did, owner, exp] = fields as [string, string, string];
  const expiresAt = Number(exp);
  if (expiresAt <= nowUnix) return { ok: false, reason: 'token expired' };
  if (did === '' || owner === '') return { ok: false, reason: 'token names no DID or owner' };
  return { ok: true, claims: { did, owner, expiresAt } };
}

/**
 * verifyPrincipalToken for a hot path: a token whose MAC checked out is remembered (by its exact text, up to `max`
 * tokens, least recently used first out), so an agent's later requests skip the decoding and the HMAC. Expiry
 * is still checked on every use, against the time given. A remembered token is only ever one that verified
 * under this key, so a lookup can accept nothing the full check would refuse; only its holder can present it.
 *
 * @example const verify = rememberingVerifier(key); verify(token, unixSeconds(clock.now()))
 */
export function rememberingVerifier(key: Buffer, max = 10_000): (token: string, nowUnix: number) => TokenCheck {
  const verified = new Map<string, PrincipalClaims>();
  return (token, nowUnix) => {
    const claims = verified.get(token);
    if (claims !== undefined) {
      if (claims.expiresAt <= nowUnix) {
        verified.delete(token);
        return { ok: false, reason: 'token expired' };
      }
      // Re-inserted so the map's order is least recently used first.
      verified.delete(token);
      verified.set(token, claims);
      return { ok: true, claims };
    }
    const check = verifyPrincipalToken(key, token, nowUnix);
    if (check.ok) {
      verified.set(token, check.claims);
      if (verified.size > max) verified.delete(verified.keys().next().value as string);
    }
    return check;
  };
}
