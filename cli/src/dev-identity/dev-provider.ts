import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoryAdapter } from '@platform/kit/oauth/oidc-memory-adapter';
import Provider, { errors } from 'oidc-provider';
import { consoleClientId, consolePath, devAudience, devClientId, devRedirectUri, devScope } from './dev-client.ts';
import { loadIdentityFiles, rememberUrl } from './identity-files.ts';

/** An hour, as the hosted providers' access tokens. */
const accessTokenSeconds = 3600;

export interface DevIdentityOptions {
  /** Its folder: signing key, user id, URL (identity-files.ts). */
  dir: string;
  /** 0 for a free one: the port of the last start when it is free, so the issuer (and its tokens) stay valid. */
  port: number;
  clientSecret: string;
  /** Signs the provider's cookies (its interaction and session state while a token is asked for). */
  cookieKey: string;
  /** The router's origins (`http://127.0.0.1:8443`): the console's client is sent back to `<origin>/console/` only. */
  consoleOrigins?: readonly string[];
}

export interface DevIdentity {
  /** Its issuer and base URL (`http://127.0.0.1:<port>`): the router's IDP_URL. */
  url: string;
  audience: string;
  /** The development user, the `sub` of every token (a UUID, generated once). */
  userId: string;
  dataLocation: string;
  stop(): Promise<void>;
}

/**
 * A real OpenID provider (oidc-provider) for development, so the router checks tokens exactly as in production
 * (discovery, JWKS over HTTP, ES256 signatures, issuer, audience, expiry). It knows one user, one confidential
 * client (`platform token`) and the console's public client, and listens on 127.0.0.1 only. Authorization is the code flow with PKCE (S256, required) and the client's
 * secret at the token endpoint; login and consent are approved at once for the development user, without a page,
 * so a token is one walk of redirects (`requestDevToken`). Reaching the port is not enough to get a token: the code is
 * worth nothing without the client secret, which only a holder of the platform's root secret can derive.
 *
 * @example const identity = await startDevIdentity({ dir, port: 8444, clientSecret, cookieKey }); // IDP_URL = identity.url
 */
export async function startDevIdentity(options: DevIdentityOptions): Promise<DevIdentity> {
  const files = loadIdentityFiles(options.dir);
  const server = createServer();
  const remembered = options.port === 0 && files.rememberedUrl ? Number(new URL(files.rememberedUrl).port) : undefined;
  const port = await listen(server, remembered ?? options.port).catch((error: NodeJS.ErrnoException) => {
    if (remembered === undefined || error.code !== 'EADDRINUSE') throw error;
    return listen(server, 0);
  });
  const url = `http://127.0.0.1:${port}`;
  const provider = new Provider(url, providerConfiguration(files.userId, files.signingKey, options));
  const handle = provider.callback();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (isHealthCheck(request)) return answerHealth(response, url);
    if (!request.url?.startsWith('/interaction/')) return handle(request, response);
    approve(provider, files.userId, request, response).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(`interaction failed: ${(error as Error).message}`);
    });
  });
  rememberUrl(options.dir, url);
  return {
    url,
    audience: devAudience,
    userId: files.userId,
    dataLocation: `files in ${options.dir}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function providerConfiguration(userId: string, signingKey: object, options: DevIdentityOptions): Record<string, unknown> {
  return {
    adapter: memoryAdapter(),
    clients: [
      ...consoleClient(options.consoleOrigins ?? []),
      {
        client_id: devClientId,
        client_secret: options.clientSecret,
        redirect_uris: [devRedirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [options.cookieKey] },
    findAccount: async (_ctx: unknown, sub: string) => (sub === userId ? { accountId: sub, claims: async () => ({ sub }) } : undefined),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // Only the console, a page on the router's origin, calls it from a browser (its token endpoint).
    clientBasedCORS: (_ctx: unknown, origin: string, client: { clientId: string }) =>
      client.clientId === consoleClientId && (options.consoleOrigins ?? []).includes(origin),
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => devAudience,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
          if (indicator !== devAudience) throw new errors.InvalidTarget(`the only resource is ${devAudience}`);
          return { scope: devScope, audience: devAudience, accessTokenFormat: 'jwt', accessTokenTTL: accessTokenSeconds, jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
    pkce: { required: () => true },
    ttl: { AccessToken: accessTokenSeconds, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600 },
  };
}

/** The console's public client, when `up` told the provider where the router serves it. */
function consoleClient(origins: readonly string[]): Record<string, unknown>[] {
  if (origins.length === 0) return [];
  return [
    {
      client_id: consoleClientId,
      redirect_uris: origins.map((origin) => `${origin}${consolePath}`),
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
  ];
}

/** Login and consent, approved at once: the development user grants the router's scope to the one client. */
async function approve(provider: Provider, userId: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(request, response);
  const grant = new provider.Grant({ accountId: userId, clientId: details.params.client_id });
  grant.addResourceScope(devAudience, devScope);
  const grantId = await grant.save();
  await provider.interactionFinished(request, response, { login: { accountId: userId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

/** `GET /healthz` (or HEAD), as every row of `up`'s ready table answers it; the query string is ignored. */
function isHealthCheck(request: IncomingMessage): boolean {
  return (request.method === 'GET' || request.method === 'HEAD') && (request.url ?? '').split('?')[0] === '/healthz';
}

/** Alive: it listens and its provider, signing key included, loaded (it is built before the first request). */
function answerHealth(response: ServerResponse, issuer: string): void {
  const body = JSON.stringify({ ok: true, data: { status: 'ok', issuer } });
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

/** Listens on 127.0.0.1 only (never HOST: the provider hands out tokens for the one user). */
function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once('error', failed);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', failed);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
