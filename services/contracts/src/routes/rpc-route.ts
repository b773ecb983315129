import type { ServiceApp } from '@platform/kit/http/create-app';
import { jsonRpcErrorHandler, jsonRpcFailureResponses } from '@platform/kit/http/json-rpc-failures';
import { jsonRpcBody } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import type { ToolInvoker } from '../tools/invoke.ts';
import { callerOf } from './caller.ts';

export const mcpProtocolVersion = '2025-06-18';

type JsonRpcId = string | number | null;
interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: { code: number; message: string };
}

const JsonRpcAnswer = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: Type.Union([Type.String(), Type.Number(), Type.Null()]),
  result: Type.Optional(Type.Unknown({ description: 'The method’s result (MCP’s initialize, tools/list, tools/call)' })),
  error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String() }, { description: 'A JSON-RPC error' })),
});

const maxIdLength = 256;

/** A name the caller sent, as an error message may echo it: the first 64 characters. */
function shortened(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}… (${name.length} characters)` : name;
}

const codes = { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602 } as const;

function failure(id: JsonRpcId, code: number, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * POST /rpc: JSON-RPC 2.0 with MCP's methods (initialize, ping, tools/list, tools/call), single or batched.
 * Tool failures are tool results with isError, as MCP has them; protocol mistakes are JSON-RPC errors.
 * Notifications (no id) get no answer; a batch of only notifications is 204.
 */
export function registerRpcRoute(app: ServiceApp, options: { invoker: ToolInvoker; serverInfo: { name: string; version: string } }): void {
  async function answer(message: unknown, callerDid: string | undefined): Promise<JsonRpcResponse | undefined> {
    if (typeof message !== 'object' || message === null || Array.isArray(message))
      return failure(null, codes.invalidRequest, 'a JSON-RPC request must be an object');
    const { jsonrpc, method, params, id } = message as Record<string, unknown>;
    // An id JSON cannot write back (1e400 parses as Infinity) or too long to echo is no id: the answer carries null.
    const replyId: JsonRpcId =
      (typeof id === 'string' && id.length <= maxIdLength) || (typeof id === 'number' && Number.isFinite(id)) ? (id as string | number) : null;
    if (jsonrpc !== '2.0' || typeof method !== 'string') return failure(replyId, codes.invalidRequest, 'jsonrpc must be "2.0" and method a string');
    const notification = !('id' in (message as object));
    const result = await dispatch(method, params, callerDid);
    if (notification) return undefined;
    return 'error' in result ? failure(replyId, result.error.code, result.error.message) : { jsonrpc: '2.0', id: replyId, result: result.result };
  }

  async function dispatch(
    method: string,
    params: unknown,
    callerDid: string | undefined,
  ): Promise<{ result: unknown } | { error: { code: number; message: string } }> {
    switch (method) {
      case 'initialize':
        return { result: { protocolVersion: mcpProtocolVersion, capabilities: { tools: { listChanged: false } }, serverInfo: options.serverInfo } };
      case 'ping':
      case 'notifications/initialized':
        return { result: {} };
      case 'tools/list':
        return { result: { tools: options.invoker.list() } };
      case 'tools/call': {
        const { name, arguments: args } = (typeof params === 'object' && params !== null ? params : {}) as { name?: unknown; arguments?: unknown };
        if (typeof name !== 'string' || !options.invoker.has(name))
          return { error: { code: codes.invalidParams, message: `unknown tool ${shortened(String(name))}` } };
        return { result: await options.invoker.call(name, args, { callerDid }) };
      }
      default:
        return { error: { code: codes.methodNotFound, message: `method ${shortened(method)} not found` } };
    }
  }

  app.post('/rpc', {
    // A body that is not JSON fails before the handler: -32700 with 400, in JSON-RPC's shape (jsonRpcErrorHandler).
    schema: {
      description: 'MCP over JSON-RPC 2.0 (initialize, ping, tools/list, tools/call), one message or a batch.',
      body: jsonRpcBody(),
      response: {
        200: Type.Union([JsonRpcAnswer, Type.Array(JsonRpcAnswer)], { description: 'The answer, or the answers of a batch' }),
        204: Type.Unsafe<undefined>({ type: 'null', description: 'Only notifications were sent: nothing to answer' }),
        ...jsonRpcFailureResponses,
      },
    },
    errorHandler: jsonRpcErrorHandler,
    handler: async (request, reply) => {
      const { callerDid } = callerOf(request);
      const body = request.body;
      let response: JsonRpcResponse | JsonRpcResponse[] | undefined;
      if (Array.isArray(body)) {
        const answers = (await Promise.all(body.map((message) => answer(message, callerDid)))).filter((entry) => entry !== undefined);
        response = body.length === 0 ? failure(null, codes.invalidRequest, 'an empty batch') : answers.length === 0 ? undefined : answers;
      } else response = await answer(body, callerDid);
      if (response === undefined) return reply.status(204).send();
      return reply.send(response);
    },
  });
}
