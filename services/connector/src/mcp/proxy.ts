import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { agentKeyFromSeed } from '@platform/client/agent-key';
import { ConnectorClient } from '@platform/client/connector-client';
import type { Env } from '@platform/kit/config';
import { relayedTraceHeaders } from '@platform/kit/observability/trace-meta';
import pino from 'pino';
import { loadProxyConfig } from './proxy-config.ts';
import { generateRegistry, parseRegistry, RegistryError, type ToolRegistry } from './registry.ts';
import { callRegistryTool } from './tool-call.ts';

/** A running proxy; `closed` resolves once stdin has ended (or `close` was called) and the server is stopped. */
export interface StdioProxy {
  closed: Promise<void>;
  close(): Promise<void>;
}

function loadRegistry(file: string | undefined): ToolRegistry {
  if (file === undefined) return generateRegistry();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new RegistryError(`CONNECTOR_TOOL_REGISTRY: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  return parseRegistry(text, file);
}

/**
 * The spec's stdio MCP proxy: serves the tool registry as `tools/list` and runs `tools/call` through the connector
 * service over HTTP, handshaking with the daemon's key, so the OAuth credential never leaves the service. A
 * confirmation arrives in the call's `params._meta["platform/confirm"]` (the daemon's gate), never in the arguments.
 * Stdout carries protocol messages only; every log goes to stderr.
 *
 * @example await runProxy(process.env)   // what `npx platform mcp connector` runs
 */
export async function runProxy(env: Env): Promise<StdioProxy> {
  const config = loadProxyConfig(env);
  // Stderr, never stdout: stdout is the protocol channel.
  const logger = pino({ level: config.logLevel, base: { service: 'connector-mcp' } }, pino.destination(2));
  const registry = loadRegistry(config.registryFile);
  const tools = new Map(registry.tools.map((tool) => [tool.name, tool]));
  const key = agentKeyFromSeed(config.agentKeyHex, config.agentUserId);
  // The daemon's tool call's trace context (in `_meta`) goes on to the connector as headers.
  const relay = relayedTraceHeaders();
  const client = new ConnectorClient({ baseUrl: config.connectorUrl, transportToken: config.transportToken, key, fetch: relay.fetch });
  const deps = { client, connectorUrl: config.connectorUrl, logger };

  const server = new Server({ name: 'platform-connector', version: '0.1.0' }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: registry.tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.get(request.params.name);
    if (tool === undefined) return { isError: true, content: [{ type: 'text', text: `no tool "${request.params.name}"; tools/list names them` }] };
    return relay.run(request.params._meta, () => callRegistryTool(tool, request.params.arguments ?? {}, request.params._meta, deps));
  });

  let stopping: Promise<void> | undefined;
  const { promise: closed, resolve: resolveClosed } = Promise.withResolvers<void>();
  const close = () => {
    stopping ??= server
      .close()
      .catch(() => undefined)
      .then(() => resolveClosed());
    return stopping;
  };
  // The client ending its side (stdin closes) is how an MCP stdio session ends.
  process.stdin.once('end', () => void close());
  await server.connect(new StdioServerTransport());
  logger.info(
    { connector: config.connectorUrl, did: key.did, tools: registry.tools.length, registry: config.registryFile ?? 'generated' },
    'connector MCP proxy on stdio',
  );
  return { closed, close };
}
