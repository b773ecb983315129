import { hash, type KeyObject, sign } from 'node:crypto';
import { rawPublicKey } from '../auth/ed25519.ts';
import { ed25519KeyType, hasControlCharacter, isValidKeyName, keyIdPreimage, signaturePrefix } from './note-verify.ts';

/**
 * Signing C2SP signed notes (https://c2sp.org/signed-note) with Ed25519, on node:crypto (settlement signs a checkpoint
 * at every window close). Opening a note, which clients do too, is in note-verify.ts on WebCrypto.
 */

export { rawPublicKey } from '../auth/ed25519.ts';
export {
  decodeCanonicalBase64,
  hasControlCharacter,
  isValidKeyName,
  type NoteOpening,
  type NoteRefusal,
  openNote,
  parseVerifierKey,
  type VerifierKey,
} from './note-verify.ts';

export interface NoteSigner {
  /** The key name; for a checkpoint it should be the log's origin. */
  name: string;
  /** An ed25519 private key, e.g. from kit's privateKeyFromSeed. */
  privateKey: KeyObject;
}

/**
 * The 4-byte key ID of an ed25519 key: SHA-256(name || 0x0A || 0x01 || 32-byte public key)[:4].
 *
 * @example keyId('PeterNeumann', publicKeyRaw).toString('hex') // 'c74f20a3'
 */
export function keyId(name: string, publicKeyRaw: Uint8Array): Buffer {
  return hash('sha256', keyIdPreimage(name, publicKeyRaw), 'buffer').subarray(0, 4);
}

/**
 * The verifier key string `<name>+<hex key ID>+<base64(0x01 || public key)>` that `/v1/info` publishes.
 * Throws on an invalid name or a key that is not 32 bytes: both are configuration errors.
 *
 * @example verifierKey('settlement.example/receipts', rawPublicKey(privateKey)) // 'settlement.example/receipts+1a2b3c4d+AR…'
 */
export function verifierKey(name: string, publicKeyRaw: Uint8Array): string {
  if (!isValidKeyName(name)) throw new Error(`invalid note key name: ${JSON.stringify(name)}`);
  if (publicKeyRaw.length !== 32) throw new Error('an ed25519 public key is 32 bytes');
  return `${name}+${keyId(name, publicKeyRaw).toString('hex')}+${Buffer.concat([Buffer.of(ed25519KeyType), publicKeyRaw]).toString('base64')}`;
}

/**
 * Signs a note text with one ed25519 key and returns the whole signed note. Throws when the text
 * does not end in a newline, holds control characters or ill-formed UTF-16, or the signer is
 * invalid: all are bugs in the caller, not expected failures.
 *
 * @example signNote('hello\n', { name: 'example.com/log', privateKey }) // 'hello\n\n— example.com/log …\n'
 */
export function signNote(text: string, signer: NoteSigner): string {
  if (!text.endsWith('\n') || hasControlCharacter(text) || !text.isWellFormed())
    throw new Error('note text must be well-formed, end in a newline and hold no control characters');
  if (!isValidKeyName(signer.name)) throw new Error(`invalid note key name: ${JSON.stringify(signer.name)}`);
  if (signer.privateKey.type !== 'private' || signer.privateKey.asymmetricKeyType !== 'ed25519') throw new Error('note signer needs an ed25519 private key');
  const id = keyId(signer.name, rawPublicKey(signer.privateKey));
  const signature = sign(null, Buffer.from(text, 'utf8'), signer.privateKey);
  return `${text}\n${signaturePrefix}${signer.name} ${Buffer.concat([id, signature]).toString('base64')}\n`;
}
