import { ServiceError } from '@platform/kit/errors';
import type { Logger } from 'pino';
import type { ConnectionsRepository } from '../connections/connections.repository.ts';
import type { ConnectorDefinition } from '../connectors/types.ts';
import { clientSettingNames, type OAuthSettings, oauthClientFor } from './settings.ts';
import type { TokenEndpoint } from './token-endpoint.ts';

export interface DisconnectorDeps {
  connections: ConnectionsRepository;
  connectors: readonly ConnectorDefinition[];
  endpoint: TokenEndpoint;
  settings: OAuthSettings;
  logger: Logger;
}

/**
 * Revokes the grant at the provider (RFC 7009, the refresh token), then deletes the row. The row goes only once
 * the provider has let the grant go (200) or says the token is already dead (400 `invalid_token`, Google's answer
 * for a revoked one): a provider that cannot be reached keeps the row, so the grant can still be revoked later.
 */
export class Disconnector {
  readonly #deps: DisconnectorDeps;

  constructor(deps: DisconnectorDeps) {
    this.#deps = deps;
  }

  async disconnect(owner: string, connectorId: string): Promise<void> {
    const { connections, endpoint, logger } = this.#deps;
    const connector = this.#deps.connectors.find((candidate) => candidate.id === connectorId);
    if (!connector) throw new ServiceError('not_found', `no connector "${connectorId}"; GET /v1/connectors lists them`);
    const found = await connections.find(owner, connector.id);
    if (!found) throw new ServiceError('not_found', `${connector.id} is not connected for this user; there is nothing to disconnect`);
    const client = oauthClientFor(connector, this.#deps.settings);
    const credential = found.unseal();
    const outcome = await endpoint.revoke(client, credential.refreshToken);
    if (outcome.kind === 'unavailable') {
      throw new ServiceError('unavailable', `the ${connector.id} provider could not revoke the grant (${outcome.detail}); the connection is kept, try again`, {
        retryable: true,
        details: { reason: 'provider_unavailable' },
      });
    }
    if (outcome.kind === 'refused' && outcome.error !== 'invalid_token') {
      const names = clientSettingNames(connector.oauth.provider);
      throw new ServiceError(
        'unavailable',
        `the ${connector.id} provider refused the revocation (${outcome.error}); the connection is kept; check ${names.clientId} and ${names.clientSecret}`,
        { retryable: false, details: { reason: 'revocation_refused', provider_error: outcome.error } },
      );
    }
    // Guarded on the credential revoked: a reconnect since then holds a new grant, which must not be dropped unrevoked.
    if (!(await connections.removeIfUnchanged(found.connection.id, found.iv))) {
      const now = await connections.find(owner, connector.id);
      const sameGrant = now?.unseal().refreshToken === credential.refreshToken;
      if (now && !sameGrant) {
        throw new ServiceError('conflict', `${connector.id} was reconnected while disconnecting; call POST /v1/disconnect again`, {
          details: { reason: 'reconnected' },
        });
      }
      // Refreshed meanwhile (same refresh token, so the same grant, now revoked): remove it as it is.
      if (now) await connections.removeIfUnchanged(now.connection.id, now.iv);
    }
    logger.info({ connection: found.connection.id, connector: connector.id, provider: outcome.kind }, 'disconnected');
  }
}
