import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
// The development identity provider `platform up` runs shares these with this test server.
import { followAuthorization } from '@platform/kit/oauth/authorization-redirects';
import { memoryAdapter } from '@platform/kit/oauth/oidc-memory-adapter';
import Provider, { type KoaContext } from 'oidc-provider';
import { listenOnFreePort } from './local-server.ts';

/** One request the provider's token or revocation endpoint answered. */
export interface EndpointCall {
  endpoint: 'token' | 'revocation';
  /** `authorization_code` or `refresh_token` at the token endpoint. */
  grantType: string | undefined;
  status: number;
  /** The OAuth error code of a refusal (`invalid_grant`). */
  error: string | undefined;
}

/** How the next login and consent end: an account that grants (some of) the scopes asked, or a refusal. */
export type InteractionDecision = { account: string; grant?: readonly string[] } | { error: string; description?: string };

export interface OAuthServerOptions {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** The scopes the resource server offers (Google's URLs, for instance). */
  scopes: readonly string[];
  /** The resource server the access tokens are for. */
  resource?: string;
  clientAuth?: 'client_secret_post' | 'client_secret_basic';
  /** Issue a new refresh token on each refresh (and treat reuse of an old one as theft). Google does not. */
  rotateRefreshTokens?: boolean;
}

type Endpoint = EndpointCall['endpoint'];

const endpointOf: Record<string, Endpoint> = { '/token': 'token', '/token/revocation': 'revocation' };

/**
 * A real OAuth 2.0 authorization server (oidc-provider) for tests, set up the way Google behaves for a web client:
 * authorization code with PKCE (S256, required), refresh tokens (for any client allowed the grant: no
 * `offline_access` scope needed), RFC 7009 revocation, custom scopes on one resource server, opaque access tokens.
 * Login and consent end without a form: `decide` says who logs in and what they grant, and `authorize` walks the
 * redirects with a cookie jar as a browser would, up to the redirect to the client. The token and revocation
 * endpoints record every call and can be made to fail or to wait.
 *
 * @example const oauth = await startOAuthServer({ clientId, clientSecret, redirectUri, scopes }); const { code, state } = await oauth.authorize(url)
 */
export async function startOAuthServer(options: OAuthServerOptions) {
  const resource = options.resource ?? 'https://www.googleapis.com/';
  const calls: EndpointCall[] = [];
  const failures: { endpoint: Endpoint; status: number; error: string; times: number }[] = [];
  const pauses: { endpoint: Endpoint; arrived: () => void; released: Promise<void> }[] = [];
  const state = { issueRefreshTokens: true, decision: { account: 'user-1' } as InteractionDecision };

  const server = createServer();
  const { port, close } = await listenOnFreePort(server);
  const issuer = `http://127.0.0.1:${port}`;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    adapter: memoryAdapter(),
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: options.clientAuth ?? 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...signingKey, kid: 'test', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      // Only the client a token was issued to may revoke it (what the default does, without its notice).
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId: string }) => token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({ scope: options.scopes.join(' '), audience: resource, accessTokenFormat: 'opaque', accessTokenTTL: 3600 }),
      },
    },
    pkce: { required: () => true },
    // Google's lifetimes where it has them (an hour's access token, a minute's code); the rest long enough for any test.
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Interaction: 600, Session: 86_400, Grant: 86_400, RefreshToken: 86_400 },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      state.issueRefreshTokens && client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: options.rotateRefreshTokens ?? false,
  });

  provider.use(async (ctx: KoaContext, next) => {
    const endpoint = endpointOf[ctx.path];
    if (!endpoint || ctx.method !== 'POST') return next();
    const pause = pauses.findIndex((p) => p.endpoint === endpoint);
    if (pause >= 0) {
      const [held] = pauses.splice(pause, 1);
      held?.arrived();
      await held?.released;
    }
    const failure = failures.find((f) => f.endpoint === endpoint && f.times > 0);
    if (failure) {
      failure.times--;
      ctx.status = failure.status;
      ctx.body = { error: failure.error, error_description: 'scripted failure' };
      calls.push({ endpoint, grantType: undefined, status: failure.status, error: failure.error });
      return;
    }
    await next();
    const error = (ctx.body as { error?: string } | undefined)?.error;
    calls.push({ endpoint, grantType: ctx.oidc?.params?.grant_type as string | undefined, status: ctx.status, error });
  });

  async function interaction(request: IncomingMessage, response: ServerResponse) {
    const details = await provider.interactionDetails(request, response);
    const decision = state.decision;
    if ('error' in decision) {
      const result = { error: decision.error, ...(decision.description ? { error_description: decision.description } : {}) };
      return provider.interactionFinished(request, response, result, { mergeWithLastSubmission: false });
    }
    const grant = new provider.Grant({ accountId: decision.account, clientId: details.params.client_id });
    for (const [indicator, scopes] of Object.entries(details.prompt.details.missingResourceScopes ?? {})) {
      const granted = decision.grant ? scopes.filter((scope) => decision.grant?.includes(scope)) : scopes;
      const refused = scopes.filter((scope) => !granted.includes(scope));
      if (granted.length > 0) grant.addResourceScope(indicator, granted.join(' '));
      if (refused.length > 0) grant.rejectResourceScope(indicator, refused.join(' '));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(request, response, { login: { accountId: decision.account }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  const handle = provider.callback();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!request.url?.startsWith('/interaction/')) return handle(request, response);
    interaction(request, response).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });

  return {
    issuer,
    authorizeUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revokeUrl: `${issuer}/token/revocation`,
    /** Every call to the token and revocation endpoints, in order. */
    calls,
    /** Token endpoint calls with this grant type that succeeded. */
    grants(grantType: 'authorization_code' | 'refresh_token'): number {
      return calls.filter((call) => call.endpoint === 'token' && call.grantType === grantType && call.status === 200).length;
    },
    /** Who logs in at the next authorizations and what they grant (all the scopes asked, by default), or a refusal. */
    decide(decision: InteractionDecision) {
      state.decision = decision;
    },
    /** Whether the token endpoint hands out refresh tokens (true by default). */
    set issueRefreshTokens(value: boolean) {
      state.issueRefreshTokens = value;
    },
    /**
     * Follows an authorization URL as a browser would (cookies kept, redirects followed) until the provider
     * sends the browser back to `redirectUri`; answers that URL's query (`code`, `state`, `error`, …).
     */
    authorize(url: string): Promise<Record<string, string>> {
      return followAuthorization(url, options.redirectUri);
    },
    /** The scopes of a live access token, undefined when unknown, expired or revoked (what a resource server checks). */
    async scopesOf(token: string): Promise<string[] | undefined> {
      const found = await provider.AccessToken.find(token);
      return found && !found.isExpired ? (found.scope ?? '').split(' ').filter(Boolean) : undefined;
    },
    /** Whether a refresh token is still known and live (false after revocation). */
    async refreshTokenLive(token: string): Promise<boolean> {
      const found = await provider.RefreshToken.find(token);
      return found !== undefined && !found.isExpired;
    },
    /** Marks an authorization code used, as if it had been exchanged already. */
    async consumeCode(code: string): Promise<void> {
      const found = await provider.AuthorizationCode.find(code);
      if (!found) throw new Error('no such authorization code');
      await found.consume();
    },
    /** The next `times` calls to `endpoint` answer `status` with the OAuth error `error` (Google answers a dead token's revocation 400 `invalid_token`). */
    failNext(endpoint: Endpoint, status: number, options: { error?: string; times?: number } = {}) {
      failures.push({ endpoint, status, error: options.error ?? 'temporarily_unavailable', times: options.times ?? 1 });
    },
    /** Revokes a token at the provider as the client would (RFC 7009), outside the service. */
    async revoke(token: string): Promise<number> {
      const body = new URLSearchParams({ token, client_id: options.clientId, client_secret: options.clientSecret });
      const response = await fetch(`${issuer}/token/revocation`, { method: 'POST', body });
      await response.arrayBuffer();
      return response.status;
    },
    /** Holds the next call to `endpoint` until `release`; `arrived` resolves when it comes in. */
    holdNext(endpoint: Endpoint): { arrived: Promise<void>; release: () => void } {
      let release = () => {};
      let arrived = () => {};
      const arrivedPromise = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      pauses.push({ endpoint, arrived, released });
      return { arrived: arrivedPromise, release };
    },
    close,
  };
}

export type OAuthServer = Awaited<ReturnType<typeof startOAuthServer>>;
