import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import type { TestEngine } from '@platform/testkit/databases';
import { type GoogleApis, startGoogleApis } from '@platform/testkit/google-apis';
import { type OAuthServer, startOAuthServer } from '@platform/testkit/oauth-server';
import type { Logger } from 'pino';
import { workspaceConnector } from '../src/connectors/workspace/definition.ts';
import { calendarEvents } from '../src/connectors/workspace/tools/calendar.ts';
import { mailModify } from '../src/connectors/workspace/tools/mail.ts';
import { confirmationDigest } from '../src/invoke/confirmation.ts';
import type { OAuthSettings } from '../src/oauth/settings.ts';
import type { Keyring } from '../src/vault/keyring.ts';
import { type CallOptions, type Connector, credentialFor, startConnector } from './harness.ts';

export { calendarEvents, mailModify };
export const connectorId = 'google-workspace';
export const clientId = 'connector-test-client';
export const clientSecret = 'connector-test-client-secret-0123456789abcdef';
export const publicUrl = 'http://connector.test';
export const redirectUri = `${publicUrl}/v1/connect/callback`;

/**
 * The connector service pointed at a fresh Google stand-in and a real OAuth server (oidc-provider) acting as Google's
 * accounts endpoints; the stand-in accepts the access tokens that server issued. Helpers connect a user (seeded, or
 * through the whole flow) and invoke tools.
 */
export async function startWorkspace(
  engine: TestEngine,
  options: {
    logger?: Logger;
    oauth?: Partial<OAuthSettings>;
    clientAuth?: 'client_secret_post' | 'client_secret_basic';
    timeoutMs?: number;
    /** The provider hands out a new refresh token on every refresh (and refuses the old one after), as many do. */
    rotateRefreshTokens?: boolean;
    keyring?: Keyring;
    metrics?: { metrics: ServiceMetrics; metricsToken: string };
  } = {},
) {
  const oauthServer: OAuthServer = await startOAuthServer({
    clientId,
    clientSecret,
    redirectUri,
    scopes: [mailModify, calendarEvents],
    clientAuth: options.clientAuth ?? 'client_secret_post',
    rotateRefreshTokens: options.rotateRefreshTokens ?? false,
  });
  const google: GoogleApis = await startGoogleApis({ now: () => new Date('2026-03-01T12:00:00Z'), tokenScopes: (token) => oauthServer.scopesOf(token) });
  const oauth: OAuthSettings = {
    publicUrl,
    stateTtlMs: 600_000,
    refreshMarginMs: 120_000,
    clients: {
      GOOGLE: { clientId, clientSecret, authorizeUrl: oauthServer.authorizeUrl, tokenUrl: oauthServer.tokenUrl, revokeUrl: oauthServer.revokeUrl },
    },
    ...options.oauth,
  };
  const s: Connector = await startConnector(engine, {
    providers: { googleApiUrl: google.url, timeoutMs: options.timeoutMs ?? 5_000 },
    oauth,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.keyring ? { keyring: options.keyring } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    // The client authentication is the definition's; a test of the other method uses a copy that says so.
    ...(options.clientAuth ? { connectors: [{ ...workspaceConnector, oauth: { ...workspaceConnector.oauth, clientAuth: options.clientAuth } }] } : {}),
  });

  /** A new agent whose user connected with `scopes` (the stand-in accepts the access token for `providerScopes`). */
  async function connectedUser(scopes: readonly string[] = [mailModify, calendarEvents], providerScopes: readonly string[] = scopes) {
    const agent = await s.agent();
    const credential = await s.seed(agent.owner, scopes, credentialFor(agent.owner.slice(0, 8)));
    google.grant(credential.accessToken, providerScopes);
    return { ...agent, credential };
  }

  /** POST /v1/connect as `token`; answers the response and the URL's query. */
  async function begin(token: string, call: Connector['call'] = s.call) {
    const begun = await call('POST', '/v1/connect', { token, body: { connector: connectorId } });
    if (begun.status !== 200) throw new Error(`connect failed: ${begun.text}`);
    const url = new URL(begun.body.data.authorization_url as string);
    return { begun, url, params: Object.fromEntries(url.searchParams) };
  }

  /** The browser arriving at the callback with `query`, carrying no bearer. */
  function callback(query: Record<string, string>, call: Connector['call'] = s.call, callOptions: CallOptions = { bearer: null }) {
    return call('GET', `/v1/connect/callback?${new URLSearchParams(query)}`, callOptions);
  }

  /** A new agent connected through the whole flow: connect, consent at the OAuth server, callback. */
  async function oauthUser() {
    const agent = await s.agent();
    const { url } = await begin(agent.token);
    const back = await oauthServer.authorize(url.toString());
    const page = await callback(back);
    if (page.status !== 200) throw new Error(`callback failed: ${page.status} ${page.text}`);
    return { ...agent, back };
  }

  /** POST /v1/invoke; `confirmed` adds the right confirmation for these arguments. */
  function invoke(
    token: string,
    tool: string,
    args: Record<string, unknown>,
    extra: { confirmed?: boolean; confirm?: unknown; call?: Connector['call'] } = {},
  ) {
    const confirm = extra.confirmed ? { tool, digest: confirmationDigest(connectorId, tool, args) } : extra.confirm;
    return (extra.call ?? s.call)('POST', '/v1/invoke', { token, body: { connector: connectorId, tool, arguments: args, ...(confirm ? { confirm } : {}) } });
  }

  /** The stored credential of an owner, unsealed (what only the service may see; the tests check it). */
  async function stored(owner: string) {
    return (await s.repository.open(owner, connectorId))?.credential;
  }

  async function close() {
    await s.close();
    await google.close();
    await oauthServer.close();
  }

  return { s, google, oauth: oauthServer, settings: oauth, connectedUser, begin, callback, oauthUser, invoke, stored, close };
}

export type Workspace = Awaited<ReturnType<typeof startWorkspace>>;
