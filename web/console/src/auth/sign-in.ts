/**
 * Sign-in in the browser: the authorization-code flow with PKCE (S256) against the identity provider the router
 * trusts, as the console's public client (no secret: a page cannot keep one). The verifier and state wait in
 * sessionStorage during the round trip; the access token is kept in sessionStorage (this tab only, gone when it
 * closes) and the code never stays in the address bar.
 */

export interface ConsoleConfig {
  client_id: string;
  scope: string;
  resource: string | null;
  authorization_endpoint: string;
  token_endpoint: string;
  redirect_path: string;
}

interface Session {
  token: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

const pendingKey = 'console.sign-in';
const sessionKey = 'console.session';
/** Give up a token this long before it expires, so no request leaves with one about to lapse. */
const expiryMarginMs = 30_000;

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function redirectUri(config: ConsoleConfig): string {
  return `${location.origin}${config.redirect_path}`;
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch('/console/config.json');
  const body = (await response.json()) as { ok: boolean; data?: ConsoleConfig; error?: { message: string } };
  if (!body.ok || body.data === undefined) throw new Error(body.error?.message ?? `the sign-in settings answered ${response.status}`);
  return body.data;
}

/** Sends the browser to the identity provider; it comes back to /console/ with a code. */
export async function beginSignIn(config: ConsoleConfig): Promise<void> {
  const verifier = randomText(32);
  const state = randomText(16);
  // Where to return inside the console after signing in (its hash route).
  sessionStorage.setItem(pendingKey, JSON.stringify({ verifier, state, hash: location.hash }));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const query = new URLSearchParams({
    client_id: config.client_id,
    redirect_uri: redirectUri(config),
    response_type: 'code',
    scope: config.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  if (config.resource !== null) query.set('resource', config.resource);
  location.assign(`${config.authorization_endpoint}?${query}`);
}

/**
 * On the way back from the provider: checks the state, exchanges the code with the verifier, keeps the token, and
 * takes the code out of the address bar whatever happens. Undefined when the URL carries no answer.
 */
export async function completeSignIn(config: ConsoleConfig): Promise<{ ok: true } | { ok: false; reason: string } | undefined> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (code === null && error === null) return undefined;
  const pending = JSON.parse(sessionStorage.getItem(pendingKey) ?? 'null') as { verifier: string; state: string; hash: string } | null;
  sessionStorage.removeItem(pendingKey);
  history.replaceState(null, '', `${config.redirect_path}${pending?.hash ?? ''}`);
  if (error !== null) return { ok: false, reason: `the identity provider refused: ${error}` };
  if (pending === null || params.get('state') !== pending.state)
    return { ok: false, reason: 'this sign-in was not started here (state mismatch); sign in again' };
  const response = await fetch(config.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code as string,
      redirect_uri: redirectUri(config),
      code_verifier: pending.verifier,
      client_id: config.client_id,
    }),
  });
  const answer = (await response.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string };
  if (!response.ok || typeof answer.access_token !== 'string') return { ok: false, reason: `the token endpoint refused: ${answer.error ?? response.status}` };
  const session: Session = { token: answer.access_token, expiresAt: Date.now() + (answer.expires_in ?? 3600) * 1000 };
  sessionStorage.setItem(sessionKey, JSON.stringify(session));
  return { ok: true };
}

/** The access token while it is valid, else undefined (the person signs in again). */
export function currentToken(): string | undefined {
  const session = JSON.parse(sessionStorage.getItem(sessionKey) ?? 'null') as Session | null;
  if (session === null || session.expiresAt - expiryMarginMs <= Date.now()) return undefined;
  return session.token;
}

export function signOut(): void {
  sessionStorage.removeItem(sessionKey);
}
