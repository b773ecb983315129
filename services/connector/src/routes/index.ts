import type { ServiceApp } from '@platform/kit/http/create-app';
import type { Logger } from 'pino';
import { callbackPath } from '../oauth/settings.ts';
import { registerConnect } from './connect.ts';
import { registerConnectCallback } from './connect-callback.ts';
import { registerDisconnect } from './disconnect.ts';
import { registerInvoke } from './invoke.ts';
import { registerListConnections } from './list-connections.ts';
import { registerListConnectors } from './list-connectors.ts';
import type { RouteDeps } from './route-deps.ts';

/**
 * Principal-scoped routes sit under these prefixes (the catalogue is not: it is the same for everyone). The kit
 * matches prefixes, so `/v1/connect` cannot be one: it would also catch `/v1/connectors` and the public callback.
 * It is listed in `principalExactPaths` instead, and its route requires the principal the kit verified.
 */
export const principalPrefixes = ['/v1/connections', '/v1/invoke', '/v1/disconnect'] as const;
export const principalExactPaths = ['/v1/connect'] as const;

/** Reachable without the transport bearer: the browser the provider sends back carries none. */
export const publicPaths = ['/', '/healthz', callbackPath] as const;

/** Every connector route; all but the callback sit behind the transport bearer. */
export function registerConnectorRoutes(app: ServiceApp, deps: RouteDeps & { logger: Logger }): void {
  registerListConnectors(app, deps);
  registerListConnections(app, deps);
  registerInvoke(app, deps);
  registerConnect(app, deps);
  registerConnectCallback(app, deps);
  registerDisconnect(app, deps);
}
