import { ServiceError } from '@platform/kit/errors';
import type { ConnectorDefinition, OAuthDefinition } from '../connectors/types.ts';

/** One provider's OAuth client as configured: `CONNECTOR_<provider>_*`. Unset URLs fall back to the definition's. */
export interface OAuthClientSettings {
  clientId?: string;
  /** A secret: sent to the provider only, never logged or answered. */
  clientSecret?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  revokeUrl?: string;
}

export interface OAuthSettings {
  /** The service's public base URL; the provider sends the browser back to `<publicUrl>/v1/connect/callback`. */
  publicUrl: string;
  /** How long a begun connect flow (its `state`) may be finished. */
  stateTtlMs: number;
  /** Access tokens expiring within this are refreshed before a tool runs. */
  refreshMarginMs: number;
  /** Keyed by `OAuthDefinition.provider` (`GOOGLE`). */
  clients: Readonly<Record<string, OAuthClientSettings>>;
}

/** Everything a flow needs to talk to one connector's provider. */
export interface OAuthClient extends Omit<OAuthDefinition, 'provider'> {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export const callbackPath = '/v1/connect/callback';

/** The setting names of a provider's client, for messages (`CONNECTOR_GOOGLE_CLIENT_ID`). */
export function clientSettingNames(provider: string) {
  const prefix = `CONNECTOR_${provider}`;
  return {
    clientId: `${prefix}_CLIENT_ID`,
    clientSecret: `${prefix}_CLIENT_SECRET`,
    authorizeUrl: `${prefix}_AUTHORIZE_URL`,
    tokenUrl: `${prefix}_TOKEN_URL`,
    revokeUrl: `${prefix}_REVOKE_URL`,
  };
}

/**
 * The connector's OAuth client, or a 503 naming the settings to fill in. Not retryable: only an operator's change
 * of settings (and a restart) fixes it.
 */
export function oauthClientFor(connector: ConnectorDefinition, settings: OAuthSettings): OAuthClient {
  const { provider, ...definition } = connector.oauth;
  const configured = settings.clients[provider] ?? {};
  if (!configured.clientId || !configured.clientSecret) {
    const names = clientSettingNames(provider);
    throw new ServiceError(
      'unavailable',
      `${connector.id} cannot be connected: its OAuth client is not configured (set ${names.clientId} and ${names.clientSecret})`,
      {
        retryable: false,
        details: { reason: 'oauth_client_missing' },
      },
    );
  }
  return {
    ...definition,
    authorizeUrl: configured.authorizeUrl ?? definition.authorizeUrl,
    tokenUrl: configured.tokenUrl ?? definition.tokenUrl,
    revokeUrl: configured.revokeUrl ?? definition.revokeUrl,
    clientId: configured.clientId,
    clientSecret: configured.clientSecret,
    redirectUri: `${settings.publicUrl.replace(/\/+$/, '')}${callbackPath}`,
  };
}
