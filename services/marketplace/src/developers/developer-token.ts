import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { getAddress, isAddress } from 'viem';

/**
 * Developer tokens (`X-Developer-Token`): `base64url(payload).base64url(mac)`, payload `<address>|<expUnix>` (the
 * address EIP-55), mac HMAC-SHA256 under a key derived from the service secret by HKDF-SHA256 (empty salt, info
 * `platform-marketplace-developer-token-v1`, 32 bytes). Its own label keeps a caller principal token (the same
 * secret, another label) from ever passing as a developer token, and the other way round. Stateless: any instance
 * accepts another's.
 */
export type DeveloperTokenCheck = { ok: true; address: string; expiresAt: number } | { ok: false; reason: string };

/** Sessions from Sign-In with Ethereum last 12 hours, or less when the signed message expires sooner. */
export const developerTokenLifetimeSeconds = 12 * 60 * 60;

export function deriveDeveloperTokenKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), 'platform-marketplace-developer-token-v1', 32));
}

const mac = (key: Buffer, payload: string): Buffer => createHmac('sha256', key).update(payload, 'utf8').digest();

export function mintDeveloperToken(key: Buffer, claims: { address: string; expiresAt: number }): string {
  const payload = `${getAddress(claims.address)}|${claims.expiresAt}`;
  return `${Buffer.from(payload, 'utf8').toString('base64url')}.${mac(key, payload).toString('base64url')}`;
}

// Canonical base64url only: Node's decoder ignores stray low bits, so one token could otherwise have several spellings.
const isCanonicalBase64url = (part: string): boolean => /^[A-Za-z0-9_-]+$/.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part;

/** Format, MAC (constant time), payload, expiry, in that order. */
export function verifyDeveloperToken(key: Buffer, token: string, nowUnix: number): DeveloperTokenCheck {
  const parts = token.split('.');
  if (parts.length !== 2) return { ok: false, reason: 'developer token format must be payload.mac' };
  const [payloadPart, macPart] = parts as [string, string];
  if (!isCanonicalBase64url(payloadPart) || !isCanonicalBase64url(macPart)) return { ok: false, reason: 'developer token parts are not base64url' };
  const payload = Buffer.from(payloadPart, 'base64url').toString('utf8');
  const presented = Buffer.from(macPart, 'base64url');
  const expected = mac(key, payload);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return { ok: false, reason: 'developer token signature does not match' };
  const match = /^(0x[0-9a-fA-F]{40})\|(\d{1,12})$/.exec(payload);
  if (!match || !isAddress(match[1] as string)) return { ok: false, reason: 'developer token payload must be address|expUnix' };
  const expiresAt = Number(match[2]);
  if (expiresAt <= nowUnix) return { ok: false, reason: 'developer token expired; sign in again' };
  return { ok: true, address: getAddress(match[1] as string), expiresAt };
}
