import { tracedFetch } from '@platform/kit/observability/tracing';
import type { OAuthClient } from './settings.ts';

/** What a token endpoint granted (RFC 6749 §5.1), with the expiry made absolute. */
export interface TokenGrant {
  accessToken: string;
  /** Absent when the provider keeps the old one (Google on refresh) or gave none (no offline access). */
  refreshToken: string | undefined;
  expiresInSeconds: number;
  /** The granted scopes, when the provider said; RFC 6749 lets it omit them when they are exactly those asked. */
  scopes: string[] | undefined;
}

/**
 * A provider's answer, expected failures as values: `refused` is a 4xx with an OAuth error code (`invalid_grant`,
 * `invalid_token`, `invalid_client`), `unavailable` is anything that may pass (5xx, 429, no answer, garbage).
 */
export type EndpointOutcome<T> = { kind: 'ok'; value: T } | { kind: 'refused'; status: number; error: string } | { kind: 'unavailable'; detail: string };

/** Google's access tokens live an hour; the default when an answer leaves `expires_in` out. */
const defaultExpiresInSeconds = 3600;
const maxAnswerBytes = 64 * 1024;

/**
 * The token, refresh and revocation calls of one provider. Form-encoded POSTs (RFC 6749 §4.1.3, §6; RFC 7009 §2.1)
 * with the client authenticated the provider's way; nothing here logs, and no error carries a request body.
 */
export class TokenEndpoint {
  readonly #timeoutMs: number;

  constructor(options: { timeoutMs: number }) {
    this.#timeoutMs = options.timeoutMs;
  }

  /** Exchanges an authorization code, proving possession of the PKCE verifier. */
  exchangeCode(client: OAuthClient, code: string, codeVerifier: string): Promise<EndpointOutcome<TokenGrant>> {
    const form = { grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: client.redirectUri };
    return this.#grant(client, form);
  }

  refresh(client: OAuthClient, refreshToken: string): Promise<EndpointOutcome<TokenGrant>> {
    return this.#grant(client, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  /** RFC 7009: the refresh token, so the whole grant goes (Google revokes the grant for either token). */
  async revoke(client: OAuthClient, refreshToken: string): Promise<EndpointOutcome<undefined>> {
    const answer = await this.#post(client, client.revokeUrl, { token: refreshToken, token_type_hint: 'refresh_token' });
    if (answer.kind !== 'ok') return answer;
    return { kind: 'ok', value: undefined };
  }

  async #grant(client: OAuthClient, form: Record<string, string>): Promise<EndpointOutcome<TokenGrant>> {
    const answer = await this.#post(client, client.tokenUrl, form);
    if (answer.kind !== 'ok') return answer;
    const json = answer.value as Record<string, unknown> | undefined;
    const accessToken = json?.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') return { kind: 'unavailable', detail: 'the token endpoint answered without an access_token' };
    const refreshToken = typeof json?.refresh_token === 'string' && json.refresh_token !== '' ? json.refresh_token : undefined;
    const expiresIn = Number(json?.expires_in ?? defaultExpiresInSeconds);
    const scope = typeof json?.scope === 'string' ? json.scope.split(' ').filter(Boolean) : undefined;
    return {
      kind: 'ok',
      value: { accessToken, refreshToken, expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : defaultExpiresInSeconds, scopes: scope },
    };
  }

  async #post(client: OAuthClient, url: string, form: Record<string, string>): Promise<EndpointOutcome<unknown>> {
    const body = new URLSearchParams(form);
    const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
    if (client.clientAuth === 'client_secret_basic') {
      // RFC 6749 §2.3.1: each part form-encoded before the base64.
      const pair = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    } else {
      body.set('client_id', client.clientId);
      body.set('client_secret', client.clientSecret);
    }
    let response: Response;
    let text: string;
    try {
      response = await tracedFetch(url, { method: 'POST', headers, body, redirect: 'error', signal: AbortSignal.timeout(this.#timeoutMs) });
      text = await readCapped(response);
    } catch (error) {
      // Named by kind only: fetch's messages hold no body, but nothing here needs more than what happened.
      const timedOut = (error as Error).name === 'TimeoutError';
      return { kind: 'unavailable', detail: timedOut ? `no answer within ${this.#timeoutMs} ms` : 'could not be reached' };
    }
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.status >= 200 && response.status < 300) return { kind: 'ok', value: json };
    const code = (json as { error?: unknown } | undefined)?.error;
    if (response.status >= 400 && response.status < 500 && response.status !== 429 && typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) {
      return { kind: 'refused', status: response.status, error: code };
    }
    return { kind: 'unavailable', detail: `answered ${response.status}` };
  }
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxAnswerBytes) throw new Error(`answer larger than ${maxAnswerBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
