import { generateKeyPairSync, type JsonWebKey, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The development provider's signing key: a private JWK (ES256, P-256) with the `kid` its tokens name. */
export type SigningJwk = JsonWebKey & { kid: string; alg: 'ES256'; use: 'sig' };

/**
 * What the development identity provider keeps in its folder (DATA_DIR/identity under `platform up`), each file written
 * once and owner-only: its signing key, so tokens it issued still verify after a restart; the development user's id
 * (a UUID, the tokens' `sub`), so a restart serves the same user and daemon; and its URL, which is its issuer, so
 * `platform token` finds it and a restart comes back at the same address.
 */
export interface IdentityFiles {
  signingKey: SigningJwk;
  userId: string;
  /** The URL of the last start, when there was one. */
  rememberedUrl: string | undefined;
}

export function loadIdentityFiles(dir: string): IdentityFiles {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const signingKey = readOrCreate(join(dir, 'signing-key.json'), () => {
    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    return { ...jwk, kid: `dev-${Date.now().toString(36)}`, alg: 'ES256', use: 'sig' };
  }) as SigningJwk;
  const { id: userId } = readOrCreate(join(dir, 'user.json'), () => ({ id: randomUUID() })) as { id: string };
  return { signingKey, userId, rememberedUrl: readRememberedUrl(dir) };
}

export function rememberUrl(dir: string, url: string): void {
  writeFileSync(join(dir, 'url'), `${url}\n`, { mode: 0o600 });
}

/** The URL the provider in `dir` listened on at its last start (undefined before the first). */
export function readRememberedUrl(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, 'url'), 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The JSON in `path`, or `create()`'s written there first ('wx': a value another process wrote first is kept). */
function readOrCreate(path: string, create: () => object): object {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as object;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${path} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  const value = create();
  try {
    writeFileSync(path, `${JSON.stringify(value)}\n`, { mode: 0o600, flag: 'wx' });
    return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return JSON.parse(readFileSync(path, 'utf8')) as object;
  }
}
