import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { deriveTokenKey, mintPrincipalToken, type PrincipalClaims, rememberingVerifier, verifyPrincipalToken } from './principal-token.ts';

const secret = 'a-long-shared-secret-for-tests';
const key = deriveTokenKey(secret, 'scheduler');
const now = 1_800_000_000;
const claims: PrincipalClaims = {
  did: 'did:platform:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:0123456789abcdef',
  owner: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  expiresAt: now + 3600,
};

const reasons = {
  format: 'token format must be payload.mac',
  base64url: 'token parts are not base64url',
  signature: 'token signature does not match',
  payload: 'token payload must be did|owner|expUnix',
  expired: 'token expired',
  empty: 'token names no DID or owner',
};

/** A correctly MACed token over an arbitrary payload, to reach the checks after the signature. */
function signedRawPayload(payload: string, withKey: Buffer = key): string {
  const mac = createHmac('sha256', withKey).update(payload, 'utf8').digest('base64url');
  return `${Buffer.from(payload, 'utf8').toString('base64url')}.${mac}`;
}

function reasonOf(token: string, at: number = now, withKey: Buffer = key): string | undefined {
  const check = verifyPrincipalToken(withKey, token, at);
  return check.ok ? undefined : check.reason;
}

/** Replaces the first character of a base64url string with a different one, so the decoded bytes change. */
function flipFirstChar(part: string): string {
  return (part[0] === 'A' ? 'B' : 'A') + part.slice(1);
}

describe('principal token round trip', () => {
  it('verifies a token it minted and returns the same claims', () => {
    const token = mintPrincipalToken(key, claims);
    assert.deepEqual(verifyPrincipalToken(key, token, now), { ok: true, claims });
  });

  it('mints payload.mac where the payload decodes to did|owner|exp', () => {
    const token = mintPrincipalToken(key, claims);
    const [payloadPart] = token.split('.');
    assert.equal(Buffer.from(payloadPart as string, 'base64url').toString('utf8'), `${claims.did}|${claims.owner}|${claims.expiresAt}`);
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('derives the same key for the same secret and service', () => {
    assert.deepEqual(deriveTokenKey(secret, 'scheduler'), key);
    assert.equal(key.length, 32);
  });
});

describe('principal token refusals', () => {
  it('refuses a token without a dot', () => {
    assert.equal(reasonOf('justonepart'), reasons.format);
  });

  it('refuses a token with three parts', () => {
    const token = mintPrincipalToken(key, claims);
    assert.equal(reasonOf(`${token}.extra`), reasons.format);
  });

  it('refuses the empty string as a format error', () => {
    assert.equal(reasonOf(''), reasons.format);
  });

  it('refuses parts that are not base64url (standard base64 characters, padding, empty part)', () => {
    const token = mintPrincipalToken(key, claims);
    const [payloadPart, macPart] = token.split('.') as [string, string];
    assert.equal(reasonOf(`${payloadPart}+.${macPart}`), reasons.base64url);
    assert.equal(reasonOf(`${payloadPart}.${macPart}/`), reasons.base64url);
    assert.equal(reasonOf(`${payloadPart}.${macPart}=`), reasons.base64url);
    assert.equal(reasonOf(`.${macPart}`), reasons.base64url);
    assert.equal(reasonOf(`${payloadPart}.`), reasons.base64url);
  });

  it('refuses a token whose payload was changed (owner swapped) with the signature reason', () => {
    const token = mintPrincipalToken(key, claims);
    const macPart = token.split('.')[1] as string;
    const forgedPayload = Buffer.from(`${claims.did}|someone-else|${claims.expiresAt}`, 'utf8').toString('base64url');
    assert.equal(reasonOf(`${forgedPayload}.${macPart}`), reasons.signature);
  });

  it('refuses a token whose payload was tampered byte-wise', () => {
    const [payloadPart, macPart] = mintPrincipalToken(key, claims).split('.') as [string, string];
    assert.equal(reasonOf(`${flipFirstChar(payloadPart)}.${macPart}`), reasons.signature);
  });

  it('refuses a token whose mac was tampered', () => {
    const [payloadPart, macPart] = mintPrincipalToken(key, claims).split('.') as [string, string];
    assert.equal(reasonOf(`${payloadPart}.${flipFirstChar(macPart)}`), reasons.signature);
  });

  it('refuses a truncated mac (wrong length) without throwing', () => {
    const [payloadPart, macPart] = mintPrincipalToken(key, claims).split('.') as [string, string];
    assert.equal(reasonOf(`${payloadPart}.${macPart.slice(0, 20)}`), reasons.signature);
  });

  it('refuses a correctly signed payload that is not did|owner|exp', () => {
    assert.equal(reasonOf(signedRawPayload('did|owner')), reasons.payload);
    assert.equal(reasonOf(signedRawPayload('did|owner|1900000000|extra')), reasons.payload);
    assert.equal(reasonOf(signedRawPayload('did|owner|soon')), reasons.payload);
    assert.equal(reasonOf(signedRawPayload('did|owner|-5')), reasons.payload);
    assert.equal(reasonOf(signedRawPayload('did|owner|')), reasons.payload);
  });

  it('treats a token expiring exactly now as expired', () => {
    const token = mintPrincipalToken(key, { ...claims, expiresAt: now });
    assert.equal(reasonOf(token, now), reasons.expired);
  });

  it('accepts a token expiring one second from now', () => {
    const token = mintPrincipalToken(key, { ...claims, expiresAt: now + 1 });
    assert.equal(verifyPrincipalToken(key, token, now).ok, true);
  });

  it('refuses a token long past its expiry', () => {
    const token = mintPrincipalToken(key, { ...claims, expiresAt: now - 86_400 });
    assert.equal(reasonOf(token, now), reasons.expired);
  });

  it('refuses a token with an empty DID', () => {
    assert.equal(reasonOf(mintPrincipalToken(key, { ...claims, did: '' })), reasons.empty);
  });

  it('refuses a token with an empty owner', () => {
    assert.equal(reasonOf(mintPrincipalToken(key, { ...claims, owner: '' })), reasons.empty);
  });
});

describe('principal token check order', () => {
  it('reports format before anything else', () => {
    assert.equal(reasonOf('not base64!|x'), reasons.format);
  });

  it('reports base64url before the signature', () => {
    assert.equal(reasonOf('a+b.c/d'), reasons.base64url);
  });

  it('reports a bad signature before a malformed payload', () => {
    const otherKey = deriveTokenKey('other-secret', 'scheduler');
    assert.equal(reasonOf(signedRawPayload('not-a-payload', otherKey)), reasons.signature);
  });

  it('reports a bad signature before expiry', () => {
    const otherKey = deriveTokenKey('other-secret', 'scheduler');
    const expiredForeign = mintPrincipalToken(otherKey, { ...claims, expiresAt: now - 10 });
    assert.equal(reasonOf(expiredForeign), reasons.signature);
  });

  it('reports a malformed payload before expiry', () => {
    assert.equal(reasonOf(signedRawPayload('did|owner|0|x')), reasons.payload);
  });

  it('reports expiry before empty claims', () => {
    const token = mintPrincipalToken(key, { did: '', owner: '', expiresAt: now });
    assert.equal(reasonOf(token), reasons.expired);
  });
});

describe('principal token keys are per service and per secret', () => {
  it("refuses a token minted for 'settlement' when checked with the 'scheduler' key of the same secret", () => {
    const settlementKey = deriveTokenKey(secret, 'settlement');
    const token = mintPrincipalToken(settlementKey, claims);
    assert.notDeepEqual(settlementKey, key);
    assert.equal(verifyPrincipalToken(settlementKey, token, now).ok, true);
    assert.equal(reasonOf(token, now, key), reasons.signature);
  });

  it('refuses a token minted with a different secret for the same service', () => {
    const otherKey = deriveTokenKey(`${secret}-rotated`, 'scheduler');
    const token = mintPrincipalToken(otherKey, claims);
    assert.equal(reasonOf(token, now, key), reasons.signature);
  });
});

describe('rememberingVerifier', () => {
  it('accepts a remembered token until its expiry, then refuses it as expired', () => {
    const verify = rememberingVerifier(key);
    const token = mintPrincipalToken(key, claims);
    assert.deepEqual(verify(token, now), { ok: true, claims });
    assert.deepEqual(verify(token, claims.expiresAt - 1), { ok: true, claims });
    assert.deepEqual(verify(token, claims.expiresAt), { ok: false, reason: reasons.expired });
  });

  it('remembers only tokens that verified: a forged one is refused every time, with the full check’s reason', () => {
    const verify = rememberingVerifier(key);
    const forged = `${mintPrincipalToken(key, claims).split('.')[0]}.${createHmac('sha256', 'other').update('x').digest('base64url')}`;
    for (let i = 0; i < 3; i++) assert.deepEqual(verify(forged, now), { ok: false, reason: reasons.signature });
    const otherKeys = rememberingVerifier(deriveTokenKey(secret, 'settlement'));
    assert.deepEqual(otherKeys(mintPrincipalToken(key, claims), now), { ok: false, reason: reasons.signature });
  });
});
