import { NonceStore } from '@platform/kit/auth/nonce-store';
import { deriveTokenKey } from '@platform/kit/auth/principal-token';
import type { Clock } from '@platform/kit/clock';
import { createServiceApp } from '@platform/kit/http/create-app';
import { registerHandshakeRoutes } from '@platform/kit/http/handshake-routes';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import { createJsonClient } from '@platform/kit/http/json-client';
import { requirePrincipal } from '@platform/kit/http/principal';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { ConnectionsRepository } from './connections/connections.repository.ts';
import { connectors as catalogue, checkConnectors } from './connectors/index.ts';
import type { ConnectorDefinition, ProviderSettings } from './connectors/types.ts';
import type { ConnectorSchema } from './db/schema.ts';
import { Invoker } from './invoke/invoker.ts';
import { connectorLimits } from './limits.ts';
import { principalPrefixes, registerConnectorRoutes } from './routes/index.ts';
import type { Vault } from './vault/vault.ts';

export const serviceName = 'connector';
export const serviceVersion = '0.1.0';
/** The principal token's header (the spec leaves it unnamed; named like the scheduler's X-Scheduler-Agent). */
export const principalHeader = 'X-Connector-Agent';

export interface AppDeps {
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
}

export const defaultProviders: ProviderSettings = { googleApiUrl: 'https://www.googleapis.com', timeoutMs: 10_000 };

/** The connector service's HTTP surface. No listening, no environment: everything arrives in `deps`. */
export function buildApp(deps: AppDeps) {
  const connectors = deps.connectors ?? catalogue;
  checkConnectors(connectors);
  const app = createServiceApp({ logger: deps.logger, bodyLimit: connectorLimits.bodyBytes });
  // The handshake message is `platform-connector-auth:<did>:<nonce>`, and tokens are keyed for this service only.
  const tokenKey = deriveTokenKey(deps.agentAuthSecret, serviceName);
  requireTransportBearer(app, { token: deps.transportToken, publicPaths: ['/', '/healthz'] });
  requirePrincipal(app, { header: principalHeader, tokenKey, clock: deps.clock, prefixes: principalPrefixes });
  registerHealthRoutes(app, { service: serviceName, version: serviceVersion, ping: deps.ping });
  registerHandshakeRoutes(app, { service: serviceName, nonces: new NonceStore(deps.db, deps.clock), tokenKey, clock: deps.clock });
  const connections = new ConnectionsRepository(deps.db, deps.vault, deps.clock);
  const client = createJsonClient({
    maxSockets: connectorLimits.providerSockets,
    timeoutMs: deps.providers?.timeoutMs ?? defaultProviders.timeoutMs,
    maxAnswerBytes: connectorLimits.providerAnswerBytes,
  });
  app.addHook('onClose', async () => client.close());
  const invoker = new Invoker({ connections, connectors, client, settings: deps.providers ?? defaultProviders, logger: deps.logger });
  registerConnectorRoutes(app, { connections, connectors, invoker });
  return app;
}
