import { createServiceApp, type ObservabilityDeps, observabilityOptions } from '@platform/kit/http/create-app';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { limits } from './limits.ts';
import type { MemoryService } from './memory/memory-service.ts';
import { ownerOf, ownerTokensFor, rootOwner } from './owners.ts';
import { registerJsonRoutes } from './routes/json-routes.ts';
import { registerMcpRoute } from './routes/mcp-route.ts';
import { ToolInvoker } from './tools/invoke.ts';
import { memoryTools } from './tools/memory-tools.ts';

export const serviceName = 'memory';
export const serviceVersion = '0.1.0';

const instructions =
  'Long-term memory for this user. Call recall with the user message (or the conversation) before answering; call remember with self-contained statements worth keeping (facts, preferences, events, procedures); when a fact changes, remember the new one with supersedes (or the same key). Memories live in scopes; "default" unless told otherwise.';

export interface AppDeps extends ObservabilityDeps {
  service: MemoryService;
  ping: () => Promise<boolean>;
  logger: Logger;
  /** MEMORY_MCP_TOKEN, and the root of every per-user token; empty leaves every route open (to the root owner). */
  token: string;
}

/** The memory server's HTTP surface: MCP at /mcp, the same tools as JSON under /v1, health. No listening. */
export function buildApp(deps: AppDeps) {
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: limits.bodyBytes,
    api: { title: serviceName, version: serviceVersion },
    ...observabilityOptions(deps),
  });
  const tokens = ownerTokensFor(deps.token);
  // The root token stores as the root owner; a per-user token (mem1.<owner>.<mac>) as its owner, and nobody else.
  requireTransportBearer(app, { token: deps.token, publicPaths: ['/healthz'], ...(tokens && { owners: { tokens, rootOwner } }) });
  const owner = (request: FastifyRequest) => ownerOf(request, tokens === undefined);
  registerHealthRoutes(app, { service: serviceName, version: serviceVersion, ping: deps.ping });
  const invoker = new ToolInvoker(memoryTools(deps.service), deps.logger);
  registerMcpRoute(app, { invoker, serverInfo: { name: `platform-${serviceName}`, version: serviceVersion }, instructions, ownerOf: owner });
  registerJsonRoutes(app, invoker, owner);
  return app;
}
