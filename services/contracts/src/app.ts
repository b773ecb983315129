import { actorOwners } from '@platform/kit/auth/owner-actor';
import { contractOwnerTokens } from '@platform/kit/auth/owner-token';
import { createServiceApp, type ObservabilityDeps, observabilityOptions } from '@platform/kit/http/create-app';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import { declareRequestHeader } from '@platform/kit/http/openapi';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import type { Logger } from 'pino';
import type { Engine } from './engine.ts';
import { callerHeader } from './evm/engine-deps.ts';
import { limits } from './limits.ts';
import { registerRpcRoute } from './routes/rpc-route.ts';
import { registerToolRoutes } from './routes/tool-routes.ts';
import { toolTable } from './tools/index.ts';
import { ToolInvoker } from './tools/invoke.ts';

export const serviceName = 'contracts';
export const serviceVersion = '0.1.0';

export interface AppDeps extends ObservabilityDeps {
  engine: Engine;
  ping: () => Promise<boolean>;
  logger: Logger;
  transportToken: string;
}

/** The engine's HTTP surface: the tool table as routes, and as JSON-RPC tools on POST /rpc. No listening, no environment. */
export function buildApp(deps: AppDeps) {
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: limits.bodyBytes,
    api: { title: serviceName, version: serviceVersion },
    ...observabilityOptions(deps),
  });
  // A daemon holds its user's owner token: its wallet calls may act only as that user's DIDs (routes/caller.ts).
  const owners = actorOwners(deps.transportToken, contractOwnerTokens);
  requireTransportBearer(app, { token: deps.transportToken, publicPaths: ['/', '/healthz'], ...(owners && { owners }) });
  registerHealthRoutes(app, { service: serviceName, version: serviceVersion, ping: deps.ping });
  declareRequestHeader(
    app,
    callerHeader,
    { description: 'The calling agent’s DID, whose embedded wallet signs (a daemon’s owner token may name only its own user’s DIDs)', maxLength: 256 },
    (route) => route.url === '/rpc' || route.url.startsWith('/v1/'),
  );
  const tools = toolTable(deps.engine);
  registerToolRoutes(app, tools);
  registerRpcRoute(app, { invoker: new ToolInvoker(tools, deps.logger), serverInfo: { name: `platform-${serviceName}`, version: serviceVersion } });
  return app;
}
