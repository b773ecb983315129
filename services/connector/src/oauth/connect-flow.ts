import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { Logger } from 'pino';
import type { ConnectionsRepository } from '../connections/connections.repository.ts';
import type { ConnectorDefinition } from '../connectors/types.ts';
import { connectorLimits } from '../limits.ts';
import type { Vault } from '../vault/vault.ts';
import { type CallbackPage, pages } from './callback-page.ts';
import type { ConnectStatesRepository } from './connect-states.repository.ts';
import { newState, pkcePair, stateHash } from './pkce.ts';
import { type OAuthSettings, oauthClientFor } from './settings.ts';
import type { TokenEndpoint } from './token-endpoint.ts';

export interface ConnectFlowDeps {
  connections: ConnectionsRepository;
  states: ConnectStatesRepository;
  connectors: readonly ConnectorDefinition[];
  endpoint: TokenEndpoint;
  settings: OAuthSettings;
  vault: Vault;
  clock: Clock;
  logger: Logger;
}

/** What the callback reads from its query; anything else the provider adds (`iss`, `scope`, `authuser`) is ignored. */
export interface CallbackQuery {
  state?: string;
  code?: string;
  error?: string;
}

// Generous bounds on what a provider sends back; longer values are not ours and are refused unread.
const maxStateLength = 128;
const maxCodeLength = 2048;

/**
 * The authorization-code flow with PKCE: `begin` stores a single-use state (by hash) bound to the owner and the
 * connector with its sealed verifier and answers the provider's URL; `complete` consumes that state, exchanges
 * the code and stores the credential. Each failure is a page of its own, and none of them stores anything.
 */
export class ConnectFlow {
  readonly #deps: ConnectFlowDeps;

  constructor(deps: ConnectFlowDeps) {
    this.#deps = deps;
  }

  async begin(owner: string, connectorId: string): Promise<{ authorizationUrl: string; expiresAt: Date }> {
    const connector = this.#deps.connectors.find((candidate) => candidate.id === connectorId);
    if (!connector) throw new ServiceError('not_found', `no connector "${connectorId}"; GET /v1/connectors lists them`);
    const client = oauthClientFor(connector, this.#deps.settings);
    // Each begun flow is a row until it is finished or expires: one owner cannot pile them up. Two begins racing at
    // the edge may both pass (count, then insert); the cap is about floods, not exactness.
    const limit = connectorLimits.pendingConnectsPerOwner;
    if ((await this.#deps.states.countLive(owner)) >= limit) {
      throw new ServiceError(
        'rate_limited',
        `${limit} connect flows begun by this user are still open; finish one in the browser or try again once one expires`,
        {
          details: { reason: 'too_many_pending_connects', limit },
        },
      );
    }
    const state = newState();
    const { verifier, challenge } = pkcePair();
    const expiresAt = await this.#deps.states.create({
      stateHash: stateHash(state),
      owner,
      connector: connector.id,
      verifier: this.#deps.vault.seal(Buffer.from(verifier, 'utf8'), { owner, connector: connector.id }),
      ttlMs: this.#deps.settings.stateTtlMs,
    });
    const url = new URL(client.authorizeUrl);
    const params = {
      ...client.authorizeParams,
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      scope: connector.scopes.map((scope) => scope.id).join(' '),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return { authorizationUrl: url.toString(), expiresAt };
  }

  async complete(query: CallbackQuery): Promise<CallbackPage> {
    const { state, code, error } = query;
    if (!state) return pages.missingState();
    if (state.length > maxStateLength) return pages.unknownState();
    const begun = await this.#deps.states.consume(stateHash(state));
    if (!begun) return pages.unknownState();
    const connector = this.#deps.connectors.find((candidate) => candidate.id === begun.connector);
    if (!connector) return pages.unknownState();
    if (!begun.live) return pages.expiredState();
    // The provider's own error code, shown escaped; capped and reduced to its alphabet so it cannot carry a message.
    if (error !== undefined) return pages.providerError(connector.name, error.replace(/[^\w.-]/g, '').slice(0, 64) || 'error');
    if (!code || code.length > maxCodeLength) return pages.missingCode(connector.name);
    const binding = { owner: begun.owner, connector: connector.id };
    let client: ReturnType<typeof oauthClientFor>;
    try {
      client = oauthClientFor(connector, this.#deps.settings);
    } catch {
      return pages.notConfigured(connector.name);
    }
    const sealedVerifier = this.#deps.vault.unseal(begun.verifier, binding);
    const verifier = sealedVerifier.toString('utf8');
    sealedVerifier.fill(0);
    const outcome = await this.#deps.endpoint.exchangeCode(client, code, verifier);
    if (outcome.kind === 'unavailable') {
      this.#deps.logger.warn({ connector: connector.id, detail: outcome.detail }, 'token endpoint unavailable during connect');
      return pages.providerUnavailable(connector.name);
    }
    if (outcome.kind === 'refused') {
      this.#deps.logger.info({ connector: connector.id, error: outcome.error }, 'token endpoint refused the authorization code');
      return pages.codeRefused(connector.name, outcome.error);
    }
    const grant = outcome.value;
    if (!grant.refreshToken) return pages.noRefreshToken(connector.name);
    // RFC 6749 §5.1: a response without `scope` granted exactly what was asked.
    const scopes = grant.scopes ?? connector.scopes.map((scope) => scope.id);
    const credential = {
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      expiresAt: new Date(this.#deps.clock.now().getTime() + grant.expiresInSeconds * 1000),
    };
    const saved = await this.#deps.connections.save(begun.owner, connector.id, scopes, credential);
    this.#deps.logger.info({ connection: saved.id, connector: connector.id, scopes }, 'connected');
    return pages.connected(connector.name, scopes);
  }
}
