import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { createRequire } from 'node:module';

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

/** The raw 32-byte public key of an ed25519 private or public KeyObject. */
export function rawPublicKey(key: KeyObject): Buffer {
  const publicKey = key.type === 'public' ? key : createPublicKey(key);
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(spkiPrefix.length);
}

/** Hex of the raw 32-byte public key for a private key. */
export function publicKeyHex(privateKey: KeyObject): string {
  return rawPublicKey(privateKey).toString('hex');
}

/** The 32-byte seed of an ed25519 private key: privateKeyFromSeed's input. */
function seedOf(privateKey: KeyObject): Buffer {
  return privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(pkcs8Prefix.length);
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

/** The part of sodium-native (libsodium's bindings) the signer and the verifier use. */
interface Sodium {
  crypto_sign_detached(signature: Buffer, message: Uint8Array, secretKey: Buffer): void;
  crypto_sign_verify_detached(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
}

let sodiumBinding: Sodium | null | undefined;

/**
 * libsodium through sodium-native, or undefined where its prebuilt binding does not load (then node:crypto signs).
 * Loaded on first use, not with this module: the binding costs a process about 5 MB resident, and most importers of
 * this module (the daemon, one process per user) only sign with node:crypto and never verify.
 */
function sodium(): Sodium | undefined {
  if (sodiumBinding === undefined) {
    try {
      sodiumBinding = createRequire(import.meta.url)('sodium-native') as Sodium;
    } catch {
      sodiumBinding = null;
    }
  }
  return sodiumBinding ?? undefined;
}

export type SignerEngine = 'sodium' | 'node';

/** Which engine `messageSigner` uses by default on this machine (asking loads the binding). */
export function defaultSignerEngine(): SignerEngine {
  return sodium() ? 'sodium' : 'node';
}

/**
 * Signs many messages with one key, for hot paths (a ledger signs every receipt): hex of the 64-byte signature.
 * libsodium signs in about half the time of node:crypto's `sign`, which sets up an OpenSSL signing context on
 * every call; ed25519 is deterministic, so both engines give the same bytes (tested).
 */
export function messageSigner(privateKey: KeyObject, engine: SignerEngine = defaultSignerEngine()): (message: Uint8Array) => string {
  const binding = engine === 'sodium' ? sodium() : undefined;
  if (!binding) return (message) => sign(null, message, privateKey).toString('hex');
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') throw new Error('messageSigner needs an ed25519 private key');
  // libsodium's secret key is the 32-byte seed followed by the 32-byte public key.
  const secretKey = Buffer.concat([seedOf(privateKey), rawPublicKey(privateKey)]);
  const signature = Buffer.alloc(64);
  return (message) => {
    binding.crypto_sign_detached(signature, message, secretKey);
    return signature.toString('hex');
  };
}

// The raw 32 bytes libsodium verifies with, per key object (publicKeyFromHex keeps the objects of recent keys).
const rawPublicKeys = new WeakMap<KeyObject, Buffer | null>();

function rawEd25519PublicKey(publicKey: KeyObject): Buffer | null {
  let raw = rawPublicKeys.get(publicKey);
  if (raw === undefined) {
    raw = publicKey.asymmetricKeyType === 'ed25519' ? rawPublicKey(publicKey) : null;
    rawPublicKeys.set(publicKey, raw);
  }
  return raw;
}

/**
 * Verifies a hex signature over a UTF-8 message; false for any malformed input. libsodium checks it in half of
 * node:crypto's time (53 against 108 µs here: settlement checks every signed intent, the marketplace every voucher);
 * node:crypto where the binding does not load. libsodium also applies RFC 8032's optional checks (it refuses
 * small-order keys and points and non-canonical encodings), which no genuine signature meets.
 */
export function verifyMessage(publicKey: KeyObject, message: string, signatureHex: string): boolean {
  if (!hex64.test(signatureHex)) return false;
  try {
    const bytes = Buffer.from(message, 'utf8');
    const signature = Buffer.from(signatureHex, 'hex');
    const binding = sodium();
    const raw = binding && rawEd25519PublicKey(publicKey);
    return binding && raw ? binding.crypto_sign_verify_detached(signature, bytes, raw) : verify(null, bytes, publicKey, signature);
  } catch {
    return false;
  }
}
