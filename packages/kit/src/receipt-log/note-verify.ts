import { concat, decodeCanonicalBase64, equalBytes, sha256, utf8, verifyEd25519 } from '../web-crypto.ts';

/**
 * Opening C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 signatures, on WebCrypto only, so a browser
 * runs the same checks as the CLI (signing, which only settlement does, is in signed-note.ts). The verifier key string
 * is `<name>+<8 hex key ID>+<base64(0x01 || public key)>`, the one golang.org/x/mod/sumdb/note defined.
 *
 * Opening follows the spec's rules: signatures from keys other than the verifier's (another name, or the same name
 * with another key ID) are ignored, so witnesses can add cosignatures; a line naming the verifier's key that fails to
 * verify rejects the whole note; and a note with no valid signature from the key is refused.
 */

export interface VerifierKey {
  name: string;
  keyId: Uint8Array;
  /** The raw 32-byte ed25519 public key. */
  publicKey: Uint8Array;
}

export type NoteRefusal =
  | 'malformed verifier key'
  | 'malformed note'
  | 'malformed signature line'
  | 'too many signatures'
  | 'no signature by the verifier key'
  | 'bad signature';

export type NoteOpening = { ok: true; text: string } | { ok: false; reason: NoteRefusal };

export const ed25519KeyType = 0x01;
export const signaturePrefix = '\u2014 '; // em dash U+2014, then a space
// Go's note.Open refuses more than 100; the spec asks verifiers to accept at least 16.
const maxSignatures = 100;

// Unicode spaces as Go's unicode.IsSpace sees them (JavaScript's \s lacks U+0085), and plus.
const forbiddenInName = /[\s\u0085+]/u;

export { decodeCanonicalBase64 } from '../web-crypto.ts';

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

/** What a key ID hashes: name || 0x0A || 0x01 || the 32-byte public key (its ID is the first 4 bytes of the SHA-256). */
export function keyIdPreimage(name: string, publicKeyRaw: Uint8Array): Uint8Array {
  return concat(utf8(name), Uint8Array.of(0x0a, ed25519KeyType), publicKeyRaw);
}

/**
 * The verifier key of `name` and a raw ed25519 public key, as parseVerifierKey returns it: what a verifier who pinned
 * the key itself (not the string) opens notes with.
 */
export async function verifierKeyOf(name: string, publicKeyRaw: Uint8Array): Promise<VerifierKey> {
  return { name, keyId: (await sha256(keyIdPreimage(name, publicKeyRaw))).subarray(0, 4), publicKey: publicKeyRaw };
}

/**
 * Parses a verifier key string, checking that its key ID matches its name and key.
 *
 * @example await parseVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')
 */
export async function parseVerifierKey(vkey: string): Promise<{ ok: true; key: VerifierKey } | { ok: false; reason: 'malformed verifier key' }> {
  const refused = { ok: false, reason: 'malformed verifier key' } as const;
  if (typeof vkey !== 'string') return refused;
  // The name cannot hold '+', so the first two are the separators; the base64 part may hold more.
  const first = vkey.indexOf('+');
  const second = vkey.indexOf('+', first + 1);
  if (first < 0 || second < 0) return refused;
  const [name, idHex, keyText] = [vkey.slice(0, first), vkey.slice(first + 1, second), vkey.slice(second + 1)];
  if (!isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) return refused;
  const keyBytes = decodeCanonicalBase64(keyText);
  if (keyBytes?.length !== 33 || keyBytes[0] !== ed25519KeyType) return refused;
  const key = await verifierKeyOf(name, keyBytes.subarray(1));
  if (idHex !== [...key.keyId].map((byte) => byte.toString(16).padStart(2, '0')).join('')) return refused;
  return { ok: true, key };
}

/**
 * Opens a signed note with one verifier key (its string, or a key pinned by other means): returns its text when a
 * signature by that key verifies, else the reason it is refused. The text must not be trusted before this succeeds.
 *
 * @example
 * const opened = await openNote(note, 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
 * if (opened.ok) use(opened.text);
 */
export async function openNote(note: string, vkey: string | VerifierKey): Promise<NoteOpening> {
  let key: VerifierKey;
  if (typeof vkey === 'string') {
    const parsed = await parseVerifierKey(vkey);
    if (!parsed.ok) return parsed;
    key = parsed.key;
  } else key = vkey;
  if (typeof note !== 'string' || !note.isWellFormed() || hasControlCharacter(note)) return { ok: false, reason: 'malformed note' };
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
    if (name !== key.name || !equalBytes(bytes.subarray(0, 4), key.keyId)) continue;
    if (!(await verifyEd25519(key.publicKey, utf8(text), bytes.subarray(4)))) return { ok: false, reason: 'bad signature' };
    verified = true;
  }
  return verified ? { ok: true, text } : { ok: false, reason: 'no signature by the verifier key' };
}
