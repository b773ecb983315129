import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { ServiceError } from '@platform/kit/errors';
import { type Keyring, vaultKeysSetting } from './keyring.ts';

/**
 * One sealed value as stored: the key id beside AES-256-GCM's IV, ciphertext and tag (columns `key_id`, `iv`,
 * `ciphertext`, `tag`). The key id is plain so the re-seal can find old rows without decrypting anything.
 */
export interface Sealed {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** Whose value it is: bound into the additional data, so a row copied to another owner or connector fails. */
export interface Binding {
  owner: string;
  connector: string;
}

export const ivBytes = 12;
export const tagBytes = 16;
const aadPrefix = 'connector-vault-v1';

/**
 * `connector-vault-v1\n<owner>\n<connector>`. Connector ids never hold a newline (checked here), so splitting at
 * the last newline recovers both parts: no two bindings share additional data, whatever the owner label holds.
 */
export function additionalData(binding: Binding): Buffer {
  if (!/^[a-z0-9-]{1,64}$/.test(binding.connector)) throw new Error('connector id must be 1 to 64 of a-z 0-9 -');
  if (binding.owner === '') throw new Error('owner must not be empty');
  return Buffer.from(`${aadPrefix}\n${binding.owner}\n${binding.connector}`, 'utf8');
}

/** A row sealed with a key no longer configured: loud, since returning anything would be returning garbage. */
export function vaultKeyMissing(keyId: string): ServiceError {
  // During a rotation the likely cause is an instance not given the new key yet: the fix is the operator's, not the user's.
  const message = `credential is sealed with vault key "${keyId}", which this instance does not have: the operator must add it to ${vaultKeysSetting} (a rotation adds a new key on every instance before any makes it current); reconnect only if the key is lost`;
  return new ServiceError('unavailable', message, {
    retryable: false,
    details: { reason: 'vault_key_missing' },
  });
}

/** AES-256-GCM over the keyring: seals with the current key, unseals with whichever key the value names. */
export class Vault {
  readonly #currentId: string;
  // KeyObjects made once: createCipheriv with a raw Buffer imports the key on every call.
  readonly #keys: ReadonlyMap<string, KeyObject>;

  constructor(keyring: Keyring) {
    this.#currentId = keyring.currentId;
    this.#keys = new Map([...keyring.keys].map(([id, key]) => [id, createSecretKey(key)]));
    if (!this.#keys.has(this.#currentId)) throw new Error(`current vault key "${this.#currentId}" is not in the keyring`);
  }

  get currentKeyId(): string {
    return this.#currentId;
  }

  /**
   * Ids of the keys listed before the current one: they still decrypt but no longer seal, and the re-seal moves their
   * rows. Keys are listed oldest first (`old:…,*new:…`).
   */
  get retiredKeyIds(): string[] {
    const ids = [...this.#keys.keys()];
    return ids.slice(0, ids.indexOf(this.#currentId));
  }

  /**
   * Ids of the keys listed after the current one: the next key of a rotation, added everywhere before any instance
   * makes it current. They decrypt (an instance already rotated seals with them) but their rows are never moved
   * back onto this instance's key, or instances in the two phases of a rolling rotation would undo each other.
   */
  get stagedKeyIds(): string[] {
    const ids = [...this.#keys.keys()];
    return ids.slice(ids.indexOf(this.#currentId) + 1);
  }

  /** Seals with the current key and a fresh random IV (never reused: 2^-96 per pair under one key). */
  seal(plaintext: Buffer, binding: Binding): Sealed {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.#currentId) as KeyObject, iv, { authTagLength: tagBytes });
    cipher.setAAD(additionalData(binding));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { keyId: this.#currentId, iv, ciphertext, tag: cipher.getAuthTag() };
  }

  /**
   * The plaintext, or a ServiceError: `vault_key_missing` when the key is gone, `vault_unseal_failed` when the
   * tag does not verify (tampered bytes, or a value bound to another owner or connector). Never partial output.
   */
  unseal(sealed: Sealed, binding: Binding): Buffer {
    const key = this.#keys.get(sealed.keyId);
    if (!key) throw vaultKeyMissing(sealed.keyId);
    if (sealed.iv.length !== ivBytes || sealed.tag.length !== tagBytes) throw unsealFailed(sealed.keyId);
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv, { authTagLength: tagBytes });
    decipher.setAAD(additionalData(binding));
    decipher.setAuthTag(sealed.tag);
    const out = decipher.update(sealed.ciphertext);
    try {
      // GCM releases nothing trustworthy before final() checks the tag; on failure the partial output is dropped.
      return Buffer.concat([out, decipher.final()]);
    } catch (error) {
      out.fill(0);
      throw unsealFailed(sealed.keyId, error);
    }
  }
}

function unsealFailed(keyId: string, cause?: unknown): ServiceError {
  return new ServiceError('internal', `credential sealed with vault key "${keyId}" failed authentication (altered, or not this connection's)`, {
    retryable: false,
    cause,
    details: { reason: 'vault_unseal_failed' },
  });
}
