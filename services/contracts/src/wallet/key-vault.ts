import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Hex } from 'viem';

/**
 * Seals wallet private keys with AES-256-GCM under the wallet key from settings. The DID is the additional
 * authenticated data, so a sealed key copied onto another agent's row does not open.
 */
export class KeyVault {
  readonly #key: Buffer;
  /** First 16 hex of SHA-256 over the key: stored beside each sealed key to tell a wrong key from a damaged row. */
  readonly keyId: string;

  constructor(keyHex: string) {
    this.#key = Buffer.from(keyHex, 'hex');
    if (this.#key.length !== 32) throw new Error('wallet key must be 32 bytes');
    this.keyId = createHash('sha256').update(this.#key).digest('hex').slice(0, 16);
  }

  seal(privateKey: Hex, did: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(did, 'utf8'));
    const sealed = Buffer.concat([cipher.update(Buffer.from(privateKey.slice(2), 'hex')), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  open(sealed: string, did: string): Hex {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(did, 'utf8'));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
    return `0x${plain.toString('hex')}`;
  }
}
