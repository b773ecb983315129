import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secret bindings at rest: AES-256-GCM under a key HKDF-derived from the marketplace's secret (its own label, so
 * no other key of the service opens them), and a keyed digest of each value for the artifact's content address
 * (a plain hash of a short secret could be searched for; the digest needs the key).
 */
export class SecretSealer {
  readonly #key: Buffer;
  readonly #digestKey: Buffer;

  constructor(serviceSecret: string) {
    this.#key = Buffer.from(hkdfSync('sha256', serviceSecret, '', 'platform-marketplace-hosted-secrets-v1', 32));
    this.#digestKey = Buffer.from(hkdfSync('sha256', serviceSecret, '', 'platform-marketplace-hosted-secret-digest-v1', 32));
  }

  /** `v1.<iv>.<ciphertext+tag>`, base64url. */
  seal(value: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  open(sealed: string): string {
    const [version, iv, body] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || body === undefined) throw new Error('not a sealed secret');
    const bytes = Buffer.from(body, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
  }

  digest(value: string): string {
    return createHmac('sha256', this.#digestKey).update(value).digest('hex');
  }
}
