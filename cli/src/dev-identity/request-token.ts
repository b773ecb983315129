import { createHash, randomBytes } from 'node:crypto';
import { followAuthorization } from '@platform/kit/oauth/authorization-redirects';
import { devClientId, devRedirectUri, devScope } from './dev-client.ts';

/**
 * A fresh access token for the development user from the provider at `url`, without a browser: the authorization
 * code flow with PKCE, its redirects walked here (the provider approves the development user at once), and the code
 * exchanged with the client secret. Throws with the provider's error when it refuses.
 *
 * @example const token = await requestDevToken(identity.url, deriveSecret(root, 'identity/client'))
 */
export async function requestDevToken(url: string, clientSecret: string): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const query = new URLSearchParams({
    client_id: devClientId,
    redirect_uri: devRedirectUri,
    response_type: 'code',
    scope: devScope,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const answer = await followAuthorization(`${url}/auth?${query}`, devRedirectUri);
  if (answer.state !== state) throw new Error('the authorization answered another state');
  if (answer.code === undefined) throw new Error(`the authorization was refused: ${answer.error ?? 'no code'} ${answer.error_description ?? ''}`.trim());
  const response = await fetch(`${url}/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: answer.code,
      redirect_uri: devRedirectUri,
      code_verifier: verifier,
      client_id: devClientId,
      client_secret: clientSecret,
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
  if (!response.ok || typeof body.access_token !== 'string')
    throw new Error(`the token endpoint refused: ${body.error ?? response.status} ${body.error_description ?? ''}`.trim());
  return body.access_token;
}
