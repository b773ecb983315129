import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { JsonRpcFailure, jsonRpcErrorHandler, jsonRpcFailure, jsonRpcFailureResponses } from '@platform/kit/http/json-rpc-failures';
import { jsonRpcBody } from '@platform/kit/wire-schemas';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ToolInvoker } from '../tools/invoke.ts';
import type { ToolContext } from '../tools/tool.ts';

export interface McpRouteOptions {
  invoker: ToolInvoker;
  serverInfo: { name: string; version: string };
  instructions: string;
  /** The owner the request's bearer verified as. */
  ownerOf: (request: FastifyRequest) => string;
}

/** An MCP server answering the tool table for one owner; one per request, since the transport is stateless. */
function mcpServer(options: McpRouteOptions, context: ToolContext): Server {
  const server = new Server(options.serverInfo, { capabilities: { tools: { listChanged: false } }, instructions: options.instructions });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: options.invoker.list().map((tool) => ({
      name: tool.name,
      title: tool.annotations.title,
      description: tool.description,
      inputSchema: tool.input as { type: 'object'; properties?: Record<string, object> },
      annotations: tool.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = options.invoker.get(request.params.name);
    const outcome = await options.invoker.call(request.params.name, request.params.arguments ?? {}, context);
    // Every refusal is a tool result the model can read and correct, as MCP wants, not a protocol error.
    if (!outcome.ok) return { isError: true, content: [{ type: 'text', text: `${outcome.error.code}: ${outcome.error.message}` }] };
    const structured = outcome.result as Record<string, unknown>;
    const text = tool?.text?.(outcome.result) ?? JSON.stringify(outcome.result);
    return { content: [{ type: 'text', text }], structuredContent: structured };
  });
  return server;
}

const methodNotAllowed = jsonRpcFailure(-32000, 'this server is stateless: POST JSON-RPC messages to /mcp; there is no stream to GET or session to DELETE');

/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST carries whole JSON-RPC messages and gets its answer
 * on that request (as an SSE stream or JSON, as the client accepts), so any instance can serve any request.
 */
export function registerMcpRoute(app: ServiceApp, options: McpRouteOptions): void {
  app.post('/mcp', {
    schema: {
      description: 'MCP over Streamable HTTP (stateless): JSON-RPC messages in, their answers out as JSON or one SSE stream.',
      body: jsonRpcBody(),
      response: {
        200: {
          description: 'The JSON-RPC answers, as the client’s Accept asks (MCP’s SDK transport writes them)',
          content: { 'application/json': { schema: Type.Unknown() }, 'text/event-stream': { schema: Type.String() } },
        },
        202: Type.Unsafe<undefined>({ type: 'null', description: 'Only notifications or responses were sent: nothing to answer' }),
        ...jsonRpcFailureResponses,
      },
    },
    errorHandler: jsonRpcErrorHandler,
    handler: async (request, reply) => {
      const server = mcpServer(options, { owner: options.ownerOf(request) });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      reply.hijack();
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  });
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { description: 'Not offered: this server is stateless (no stream to GET, no session to DELETE).', response: { 405: JsonRpcFailure } },
      handler: async (_request, reply) => reply.status(405).header('allow', 'POST').send(methodNotAllowed),
    });
  }
}
