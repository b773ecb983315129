import { readRememberedUrl } from './dev-identity/identity-files.ts';
import { requestDevToken } from './dev-identity/request-token.ts';
import { devIdentityDir } from './dev-identity/up-identity.ts';
import { derivedValue, rootSecret } from './platform-secrets.ts';

/**
 * `platform token`: prints a fresh access token (an hour) for the development user from the identity provider a
 * running `platform up` started with this DATA_DIR, for `Authorization: Bearer` at the router. It reads the
 * provider's URL from its folder and derives the client secret from the root (never creating one), so only who can
 * read the platform's root secret gets a token. Only the token goes to stdout.
 */
export async function tokenCommand(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<number> {
  if (args.length > 0) {
    console.error('platform token: takes no argument (DATA_DIR names the platform, as for platform up)');
    return 2;
  }
  const dir = devIdentityDir(env);
  let url: string | undefined;
  let root: Buffer;
  try {
    url = readRememberedUrl(dir);
    if (url === undefined) {
      console.error(
        `platform token: no development identity provider has run in ${dir} (start platform up with this DATA_DIR; with IDP_URL set, ask that provider)`,
      );
      return 1;
    }
    root = rootSecret(env, { create: false }).key;
  } catch (error) {
    console.error(`platform token: ${(error as Error).message}`);
    return 1;
  }
  try {
    process.stdout.write(`${await requestDevToken(url, derivedValue('IDENTITY_CLIENT_SECRET', root) as string)}\n`);
    return 0;
  } catch (error) {
    const reason = (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    console.error(`platform token: the development identity provider at ${url} gave no token: ${reason} (is platform up running with this DATA_DIR?)`);
    return 1;
  }
}
