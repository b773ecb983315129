import { NonceStore } from '@platform/kit/auth/nonce-store';
import { actorOwners } from '@platform/kit/auth/owner-actor';
import { connectorOwnerTokens } from '@platform/kit/auth/owner-token';
import { deriveTokenKey } from '@platform/kit/auth/principal-token';
import type { Clock } from '@platform/kit/clock';
import { createServiceApp, type ObservabilityDeps, observabilityOptions } from '@platform/kit/http/create-app';
import { registerHandshakeRoutes } from '@platform/kit/http/handshake-routes';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import { createJsonClient } from '@platform/kit/http/json-client';
import { requirePrincipal } from '@platform/kit/http/principal';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { ConnectionsRepository } from './connections/connections.repository.ts';
import { connectors as catalogue, checkConnectors } from './connectors/index.ts';
import type { ConnectorDefinition, ProviderSettings } from './connectors/types.ts';
import type { ConnectorSchema } from './db/schema.ts';
import { Invoker } from './invoke/invoker.ts';
import { connectorLimits } from './limits.ts';
import { connectorMetrics } from './metrics.ts';
import { ConnectFlow } from './oauth/connect-flow.ts';
import { ConnectStatesRepository } from './oauth/connect-states.repository.ts';
import { Disconnector } from './oauth/disconnector.ts';
import { Refresher } from './oauth/refresher.ts';
import type { OAuthSettings } from './oauth/settings.ts';
import { TokenEndpoint } from './oauth/token-endpoint.ts';
import { principalHeader } from './principal-header.ts';
import { principalExactPaths, principalPrefixes, publicPaths, registerConnectorRoutes } from './routes/index.ts';
import type { Vault } from './vault/vault.ts';

export { principalHeader };

export const serviceName = 'connector';
export const serviceVersion = '0.1.0';

export interface AppDeps extends ObservabilityDeps {
  db: Kysely<ConnectorSchema>;
  ping: () => Promise<boolean>;
  clock: Clock;
  logger: Logger;
  vault: Vault;
  transportToken: string;
  agentAuthSecret: string;
  connectors?: readonly ConnectorDefinition[];
  /** Where the providers are; Google's public endpoint and a 10 s timeout by default. */
  providers?: ProviderSettings;
  /** OAuth clients, the public URL and the flow's timings; without clients, connecting answers 503 naming the settings. */
  oauth?: OAuthSettings;
}

export const defaultProviders: ProviderSettings = { googleApiUrl: 'https://www.googleapis.com', timeoutMs: 10_000 };
export const defaultOAuth: OAuthSettings = { publicUrl: 'http://127.0.0.1:9094', stateTtlMs: 600_000, refreshMarginMs: 120_000, clients: {} };

/** The connector service's HTTP surface. No listening, no environment: everything arrives in `deps`. */
export function buildApp(deps: AppDeps) {
  const connectors = deps.connectors ?? catalogue;
  checkConnectors(connectors);
  const metrics = deps.metrics ?? createServiceMetrics(serviceName);
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: connectorLimits.bodyBytes,
    api: { title: serviceName, version: serviceVersion },
    metrics,
    ...observabilityOptions(deps),
  });
  // The handshake message is `platform-connector-auth:<did>:<nonce>`, and tokens are keyed for this service only.
  const tokenKey = deriveTokenKey(deps.agentAuthSecret, serviceName);
  // A daemon's proxy holds its user's owner token (cnx1): the kit's handshake and principal checks then accept only
  // that user's DIDs, so nobody claims did:platform:<victim>:<own key> to use or drop the victim's connection.
  const owners = actorOwners(deps.transportToken, connectorOwnerTokens);
  requireTransportBearer(app, { token: deps.transportToken, publicPaths, ...(owners && { owners }) });
  requirePrincipal(app, { header: principalHeader, tokenKey, clock: deps.clock, prefixes: principalPrefixes, optional: principalExactPaths });
  registerHealthRoutes(app, { service: serviceName, version: serviceVersion, ping: deps.ping });
  registerHandshakeRoutes(app, { service: serviceName, nonces: new NonceStore(deps.db, deps.clock), tokenKey, clock: deps.clock });
  const connections = new ConnectionsRepository(deps.db, deps.vault, deps.clock);
  const counts = connectorMetrics(metrics, connectors);
  counts.readReconnectsNeededFrom(() => connections.countNeedingReconnect());
  const providers = deps.providers ?? defaultProviders;
  const oauth = deps.oauth ?? defaultOAuth;
  const client = createJsonClient({
    maxSockets: connectorLimits.providerSockets,
    timeoutMs: providers.timeoutMs,
    maxAnswerBytes: connectorLimits.providerAnswerBytes,
  });
  app.addHook('onClose', async () => client.close());
  const endpoint = new TokenEndpoint({ timeoutMs: providers.timeoutMs });
  const refresher = new Refresher({
    connections,
    endpoint,
    settings: oauth,
    clock: deps.clock,
    logger: deps.logger,
    leaseMs: providers.timeoutMs + connectorLimits.refreshLeaseSlackMs,
    pollMs: connectorLimits.refreshPollMs,
    metrics: counts,
  });
  const invoker = new Invoker({ connections, connectors, client, settings: providers, logger: deps.logger, refresher, metrics: counts });
  const states = new ConnectStatesRepository(deps.db, deps.clock);
  const connectFlow = new ConnectFlow({
    connections,
    states,
    connectors,
    endpoint,
    settings: oauth,
    vault: deps.vault,
    clock: deps.clock,
    logger: deps.logger,
  });
  const disconnector = new Disconnector({ connections, connectors, endpoint, settings: oauth, logger: deps.logger });
  registerConnectorRoutes(app, { connections, connectors, invoker, connectFlow, disconnector, logger: deps.logger });
  return app;
}
