import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

// DER prefixes that wrap a raw 32-byte ed25519 seed or public key into PKCS#8 / SPKI, so node:crypto can use them.
const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
const hex32 = /^[0-9a-fA-F]{64}$/;
const hex64 = /^[0-9a-fA-F]{128}$/;

/** The private key for a 32-byte seed given as 64 hex characters. Throws on a malformed seed (a configuration error). */
export function privateKeyFromSeed(seedHex: string): KeyObject {
  if (!hex32.test(seedHex)) throw new Error('ed25519 seed must be 64 hex characters');
  return createPrivateKey({ key: Buffer.concat([pkcs8Prefix, Buffer.from(seedHex, 'hex')]), format: 'der', type: 'pkcs8' });
}

/** Hex of the raw 32-byte public key for a private key. */
export function publicKeyHex(privateKey: KeyObject): string {
  const der = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return der.subarray(spkiPrefix.length).toString('hex');
}

// Building a KeyObject costs more than the verification it serves (measured: createPublicKey was half the
// cost of checking a voucher); the same few keys sign again and again, so the last ones are kept.
const publicKeys = new Map<string, KeyObject>();
const publicKeyCacheSize = 4096;

/** The public key for 64 hex characters, or undefined when they are not a valid ed25519 key. */
export function publicKeyFromHex(publicHex: string): KeyObject | undefined {
  if (!hex32.test(publicHex)) return undefined;
  const known = publicKeys.get(publicHex);
  if (known) return known;
  try {
    const key = createPublicKey({ key: Buffer.concat([spkiPrefix, Buffer.from(publicHex, 'hex')]), format: 'der', type: 'spki' });
    if (publicKeys.size >= publicKeyCacheSize) publicKeys.delete(publicKeys.keys().next().value as string);
    publicKeys.set(publicHex, key);
    return key;
  } catch {
    return undefined;
  }
}

/** Signs a UTF-8 message; returns the 64-byte signature as hex. */
export function signMessage(privateKey: KeyObject, message: string): string {
  return sign(null, Buffer.from(message, 'utf8'), privateKey).toString('hex');
}

/** Verifies a hex signature over a UTF-8 message; false for any malformed input. */
export function verifyMessage(publicKey: KeyObject, message: string, signatureHex: string): boolean {
  if (!hex64.test(signatureHex)) return false;
  try {
    return verify(null, Buffer.from(message, 'utf8'), publicKey, Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}
