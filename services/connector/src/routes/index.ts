import type { ServiceApp } from '@platform/kit/http/create-app';
import { registerInvoke } from './invoke.ts';
import { registerListConnections } from './list-connections.ts';
import { registerListConnectors } from './list-connectors.ts';
import type { RouteDeps } from './route-deps.ts';

/**
 * Principal-scoped routes sit under these prefixes (the catalogue is not: it is the same for everyone). Exact
 * paths, not `/v1/connect`-style stems, which would also catch `/v1/connectors`.
 */
export const principalPrefixes = ['/v1/connections', '/v1/invoke'] as const;

/** Every connector route; all sit behind the transport bearer. */
export function registerConnectorRoutes(app: ServiceApp, deps: RouteDeps): void {
  registerListConnectors(app, deps);
  registerListConnections(app, deps);
  registerInvoke(app, deps);
}
