/**
 * Hashing, ed25519 verification and byte encodings through WebCrypto (`globalThis.crypto.subtle`) and plain
 * Uint8Arrays, with no Node module: Node 24 and every current browser run this file as it is. The verifiers of the
 * platform's signed records (settlement receipts and checkpoints, the daemon's journal) are built on it, so the CLI
 * and the console run the same checks. Signing and the producers' hot paths stay on node:crypto (synchronous, faster).
 */

const subtle = globalThis.crypto.subtle;
const encoder = new TextEncoder();

/** UTF-8 bytes of a text. */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

/**
 * SHA-256 of the parts, concatenated.
 *
 * @example bytesToHex(await sha256(utf8('abc'))) // 'ba7816bf…'
 */
export async function sha256(...parts: readonly Uint8Array[]): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await subtle.digest('SHA-256', concat(...parts)));
}

/** The parts in one array. */
export function concat(...parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Whether `signature` (64 bytes) is the ed25519 signature of `message` by the raw 32-byte `publicKey`. False for any
 * malformed input (a key that is not on the curve, a wrong length), never an exception.
 *
 * @example await verifyEd25519(hexToBytes(publicKeyHex)!, utf8(text), hexToBytes(signatureHex)!)
 */
export async function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    const key = await subtle.importKey('raw', copy(publicKey), { name: 'Ed25519' }, false, ['verify']);
    return await subtle.verify({ name: 'Ed25519' }, key, copy(signature), copy(message));
  } catch {
    return false;
  }
}

/** WebCrypto takes only ArrayBuffer-backed views; a Node Buffer may sit in a shared pool. */
function copy(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}

const hexPattern = /^(?:[0-9a-fA-F]{2})*$/;

/** The bytes of an even-length hex string (either case, no prefix), or undefined when it is not one. */
export function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (typeof hex !== 'string' || !hexPattern.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Lowercase hex of the bytes. */
export function bytesToHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Standard base64 (with padding) of the bytes. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Standard base64 in its single canonical spelling, else undefined: no URL-safe letters, no whitespace, padding as
 * required, and no stray bits in the last character (a lenient decoder would give several spellings one meaning).
 */
export function decodeCanonicalBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  return bytesToBase64(bytes) === text ? bytes : undefined;
}

/** Whether two byte arrays hold the same bytes (not constant-time: for public data only). */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
