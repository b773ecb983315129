import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

/**
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 signatures only: a text ending in a
 * newline, a blank line, then signature lines `— <key name> <base64(4-byte key ID || signature)>`.
 * The verifier key string `<name>+<8 hex key ID>+<base64(0x01 || public key)>` is the one
 * golang.org/x/mod/sumdb/note defined and the transparency-log ecosystem shares.
 *
 * Opening follows the spec's rules: signatures from keys other than the verifier's (another name, or
 * the same name with another key ID) are ignored, so witnesses can add cosignatures; a line naming the
 * verifier's key that fails to verify rejects the whole note; and a note with no valid signature from
 * the key is refused.
 */

export interface NoteSigner {
  /** The key name; for a checkpoint it should be the log's origin. */
  name: string;
  /** An ed25519 private key, e.g. from kit's privateKeyFromSeed. */
  privateKey: KeyObject;
}

export interface VerifierKey {
  name: string;
  keyId: Buffer;
  publicKey: KeyObject;
}

export type NoteRefusal =
  | 'malformed verifier key'
  | 'malformed note'
  | 'malformed signature line'
  | 'too many signatures'
  | 'no signature by the verifier key'
  | 'bad signature';

export type NoteOpening = { ok: true; text: string } | { ok: false; reason: NoteRefusal };

const ed25519Type = 0x01;
const signaturePrefix = '\u2014 '; // em dash U+2014, then a space
// Go's note.Open refuses more than 100; the spec asks verifiers to accept at least 16.
const maxSignatures = 100;
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');

// Unicode spaces as Go's unicode.IsSpace sees them (JavaScript's \s lacks U+0085), and plus.
const forbiddenInName = /[\s\u0085+]/u;

/** Whether the text holds an ASCII control character other than newline: notes forbid them anywhere. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && code !== 0x0a) return true;
  }
  return false;
}

/** Whether a key name is valid: non-empty, well-formed, no Unicode space, no plus, no control character. */
export function isValidKeyName(name: string): boolean {
  return name !== '' && name.isWellFormed() && !forbiddenInName.test(name) && !hasControlCharacter(name);
}

/** Standard base64 in its single canonical spelling; Node's decoder would otherwise accept stray bits, URL-safe letters and junk. */
export function decodeCanonicalBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/**
 * The 4-byte key ID of an ed25519 key: SHA-256(name || 0x0A || 0x01 || 32-byte public key)[:4].
 *
 * @example keyId('PeterNeumann', publicKeyRaw).toString('hex') // 'c74f20a3'
 */
export function keyId(name: string, publicKeyRaw: Uint8Array): Buffer {
  return createHash('sha256').update(name, 'utf8').update(Buffer.of(0x0a, ed25519Type)).update(publicKeyRaw).digest().subarray(0, 4);
}

/** The raw 32-byte public key of an ed25519 private or public KeyObject. */
export function rawPublicKey(key: KeyObject): Buffer {
  const publicKey = key.type === 'public' ? key : createPublicKey(key);
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(spkiPrefix.length);
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
  return `${name}+${keyId(name, publicKeyRaw).toString('hex')}+${Buffer.concat([Buffer.of(ed25519Type), publicKeyRaw]).toString('base64')}`;
}

/**
 * Parses a verifier key string, checking that its key ID matches its name and key.
 *
 * @example parseVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')
 */
export function parseVerifierKey(vkey: string): { ok: true; key: VerifierKey } | { ok: false; reason: 'malformed verifier key' } {
  const refused = { ok: false, reason: 'malformed verifier key' } as const;
  // The name cannot hold '+', so the first two are the separators; the base64 part may hold more.
  const first = vkey.indexOf('+');
  const second = vkey.indexOf('+', first + 1);
  if (first < 0 || second < 0) return refused;
  const [name, idHex, keyText] = [vkey.slice(0, first), vkey.slice(first + 1, second), vkey.slice(second + 1)];
  if (!isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) return refused;
  const keyBytes = decodeCanonicalBase64(keyText);
  if (keyBytes?.length !== 33 || keyBytes[0] !== ed25519Type) return refused;
  const raw = keyBytes.subarray(1);
  if (keyId(name, raw).toString('hex') !== idHex) return refused;
  try {
    const publicKey = createPublicKey({ key: Buffer.concat([spkiPrefix, raw]), format: 'der', type: 'spki' });
    return { ok: true, key: { name, keyId: Buffer.from(idHex, 'hex'), publicKey } };
  } catch {
    return refused;
  }
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

/**
 * Opens a signed note with one verifier key: returns its text when a signature by that key verifies,
 * else the reason it is refused. The text must not be trusted before this succeeds.
 *
 * @example
 * const opened = openNote(note, 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
 * if (opened.ok) use(opened.text);
 */
export function openNote(note: string, vkey: string): NoteOpening {
  const parsed = parseVerifierKey(vkey);
  if (!parsed.ok) return parsed;
  const key = parsed.key;
  if (!note.isWellFormed() || hasControlCharacter(note)) return { ok: false, reason: 'malformed note' };
  // The text ends at the last blank line: the text may hold blank lines, signature lines never do.
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return { ok: false, reason: 'malformed note' };
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > maxSignatures) return { ok: false, reason: 'too many signatures' };
  let verified = false;
  for (const line of lines) {
    if (!line.startsWith(signaturePrefix)) return { ok: false, reason: 'malformed signature line' };
    const rest = line.slice(signaturePrefix.length);
    const space = rest.indexOf(' ');
    const [name, encoded] = space < 0 ? [rest, ''] : [rest.slice(0, space), rest.slice(space + 1)];
    const bytes = decodeCanonicalBase64(encoded);
    if (!isValidKeyName(name) || bytes === undefined || bytes.length < 5) return { ok: false, reason: 'malformed signature line' };
    // Only the (name, key ID) pair identifies our key; a line matching just one of them belongs to someone else.
    if (name !== key.name || !bytes.subarray(0, 4).equals(key.keyId)) continue;
    if (!verifyEd25519(key.publicKey, text, bytes.subarray(4))) return { ok: false, reason: 'bad signature' };
    verified = true;
  }
  return verified ? { ok: true, text } : { ok: false, reason: 'no signature by the verifier key' };
}

function verifyEd25519(publicKey: KeyObject, text: string, signature: Buffer): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, Buffer.from(text, 'utf8'), publicKey, signature);
  } catch {
    return false;
  }
}
