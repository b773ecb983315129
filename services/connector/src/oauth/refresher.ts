import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { Logger } from 'pino';
import { needsReconnect, notConnected } from '../connections/connection-errors.ts';
import type { ConnectionsRepository, FoundConnection } from '../connections/connections.repository.ts';
import type { Credential } from '../connections/credential.ts';
import type { ConnectorDefinition } from '../connectors/types.ts';
import type { ConnectorMetrics } from '../metrics.ts';
import { clientSettingNames, type OAuthClient, type OAuthSettings, oauthClientFor } from './settings.ts';
import type { TokenEndpoint } from './token-endpoint.ts';

export interface RefresherDeps {
  connections: ConnectionsRepository;
  endpoint: TokenEndpoint;
  settings: OAuthSettings;
  clock: Clock;
  logger: Logger;
  /** How long a claim lasts: longer than a provider call may take, so a live claimant never loses it. */
  leaseMs: number;
  /** How often an instance that lost the claim looks at the row again. */
  pollMs: number;
  /** Counts each refresh at the token endpoint by outcome (`connector_refreshes_total`). */
  metrics: ConnectorMetrics;
}

/** The row as one refresh attempt sees it: its id, the IV naming the sealed credential, and that credential. */
interface Held {
  id: string;
  iv: Buffer;
  credential: Credential;
}

/**
 * Refreshes access tokens, one refresh per connection at a time: callers in this process share one flight, and
 * instances share a claim on the row (`refresh_claimed_until` and the claim's token `refresh_claim`, set by one
 * conditional UPDATE, so no transaction is held across the provider call). The claimant's release, refreshed write
 * and `needs_reconnect` mark are guarded on its token, so they land even if a re-seal moved the row meanwhile. An
 * instance that loses the claim reads the row again until the winner's credential appears or the claim lapses,
 * waiting on the injected clock.
 */
export class Refresher {
  readonly #deps: RefresherDeps;
  readonly #flights = new Map<string, Promise<Credential>>();

  constructor(deps: RefresherDeps) {
    this.#deps = deps;
  }

  /** Whether a token expiring at `expiresAt` should be refreshed before use. */
  expiring(credential: Credential): boolean {
    return credential.expiresAt.getTime() - this.#deps.clock.now().getTime() <= this.#deps.settings.refreshMarginMs;
  }

  /** The credential to call the provider with: `credential` itself unless it expires within the margin. */
  async usable(owner: string, connector: ConnectorDefinition, found: FoundConnection, credential: Credential): Promise<Credential> {
    return this.expiring(credential) ? this.refresh(owner, connector, found, credential) : credential;
  }

  /**
   * A credential other than `stale` (which expires soon, or which the provider refused): a sibling's, if one wrote
   * it meanwhile, else a refreshed one. Throws 409 needs_reconnect when the provider refuses the grant
   * (`invalid_grant`), 503 when it cannot be reached (retryable; the connection stays as it is).
   */
  refresh(owner: string, connector: ConnectorDefinition, found: FoundConnection, stale: Credential): Promise<Credential> {
    const id = found.connection.id;
    let flight = this.#flights.get(id);
    if (!flight) {
      flight = this.#claimAndRefresh(owner, connector, { id, iv: found.iv, credential: stale }).finally(() => this.#flights.delete(id));
      this.#flights.set(id, flight);
    }
    return flight;
  }

  async #claimAndRefresh(owner: string, connector: ConnectorDefinition, stale: Held): Promise<Credential> {
    const client = oauthClientFor(connector, this.#deps.settings);
    const { clock, connections, leaseMs, pollMs } = this.#deps;
    // Past the lease, a claim left by a crashed instance has lapsed and is ours to take; this bounds the wait.
    const giveUpAt = clock.now().getTime() + leaseMs + 2 * pollMs;
    let current = stale;
    for (;;) {
      const claim = await connections.claimRefresh(current.id, current.iv, leaseMs);
      if (claim) return this.#refreshClaimed(owner, connector, client, current, claim);
      const row = await connections.find(owner, connector.id);
      if (!row) throw notConnected(connector.id);
      if (row.connection.status === 'needs_reconnect') throw needsReconnect(connector.id);
      if (!row.iv.equals(current.iv)) {
        const credential = row.unseal();
        // A sibling refreshed (or the user reconnected): use its credential rather than refresh again.
        if (credential.accessToken !== stale.credential.accessToken && !this.expiring(credential)) return credential;
        // The same token re-sealed by the key rotation, or still stale: claim that row instead.
        current = { id: row.connection.id, iv: row.iv, credential };
        continue;
      }
      if (clock.now().getTime() >= giveUpAt) {
        throw new ServiceError('unavailable', `another instance is refreshing the ${connector.id} credential; try again`, {
          retryable: true,
          details: { reason: 'refresh_in_progress' },
        });
      }
      await clock.sleep(pollMs);
    }
  }

  async #refreshClaimed(owner: string, connector: ConnectorDefinition, client: OAuthClient, held: Held, claim: string): Promise<Credential> {
    const { connections, logger, endpoint, clock, metrics } = this.#deps;
    const binding = { owner, connector: connector.id };
    let stored = false;
    try {
      const outcome = await endpoint.refresh(client, held.credential.refreshToken).catch((error: unknown) => {
        metrics.refresh('error');
        throw error;
      });
      metrics.refresh(
        outcome.kind === 'ok' ? 'ok' : outcome.kind === 'unavailable' ? 'unavailable' : outcome.error === 'invalid_grant' ? 'invalid_grant' : 'client_refused',
      );
      if (outcome.kind === 'ok') {
        const credential: Credential = {
          accessToken: outcome.value.accessToken,
          // Google keeps the refresh token and sends none back; a provider that rotates sends the new one.
          refreshToken: outcome.value.refreshToken ?? held.credential.refreshToken,
          expiresAt: new Date(clock.now().getTime() + outcome.value.expiresInSeconds * 1000),
        };
        stored = await connections.replaceCredential(held.id, binding, claim, credential, outcome.value.scopes);
        // Not stored: a reconnect replaced the row meanwhile. The token is still good for this call; the row keeps the newer grant.
        logger.info({ connection: held.id, connector: connector.id, stored }, 'credential refreshed');
        return credential;
      }
      if (outcome.kind === 'unavailable') {
        throw new ServiceError('unavailable', `could not refresh the ${connector.id} credential: the token endpoint ${outcome.detail}; try again`, {
          retryable: true,
          details: { reason: 'provider_unavailable' },
        });
      }
      if (outcome.error !== 'invalid_grant') throw clientRefused(connector, outcome.error);
      return await this.#afterInvalidGrant(owner, connector, held, claim);
    } finally {
      // A claim left standing makes every call on this connection wait out the lease, so a failed release is logged.
      if (!stored)
        await connections.releaseRefresh(held.id, claim).catch((error) => {
          logger.warn({ err: error, connection: held.id }, 'could not release the refresh claim; it lapses at the end of its lease');
        });
    }
  }

  /** The grant is refused: unless a sibling stored another credential meanwhile, the user has to reconnect. */
  async #afterInvalidGrant(owner: string, connector: ConnectorDefinition, held: Held, claim: string): Promise<Credential> {
    const { connections, logger } = this.#deps;
    const row = await connections.find(owner, connector.id);
    if (row && row.connection.status === 'connected' && !row.iv.equals(held.iv)) {
      const credential = row.unseal();
      if (credential.refreshToken !== held.credential.refreshToken || credential.accessToken !== held.credential.accessToken) {
        logger.info({ connection: held.id, connector: connector.id }, 'refresh refused, but a newer credential was stored meanwhile; using it');
        return credential;
      }
    }
    const marked = await connections.markNeedsReconnect(held.id, claim);
    logger.warn({ connection: held.id, connector: connector.id, marked }, 'provider refused the refresh (invalid_grant); marked needs_reconnect');
    throw needsReconnect(connector.id);
  }
}

/** The provider refused the service's client itself (`invalid_client`, …): an operator's fix, not the user's. */
function clientRefused(connector: ConnectorDefinition, error: string): ServiceError {
  const names = clientSettingNames(connector.oauth.provider);
  return new ServiceError(
    'unavailable',
    `the ${connector.id} token endpoint refused the service's OAuth client (${error}); check ${names.clientId} and ${names.clientSecret}`,
    { retryable: false, details: { reason: 'oauth_client_refused', provider_error: error } },
  );
}
