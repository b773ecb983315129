import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { FailureSchema, failure } from '../envelope.ts';
import { logFailure, toServiceError } from './error-handler.ts';

/** A JSON-RPC 2.0 error answer with no id (the request's could not be read, or it never got as far). */
export const JsonRpcFailure = Type.Object(
  { jsonrpc: Type.Literal('2.0'), error: Type.Object({ code: Type.Integer(), message: Type.String() }), id: Type.Null() },
  { description: 'A JSON-RPC error' },
);

export const jsonRpcFailure = (code: number, message: string) => ({ jsonrpc: '2.0' as const, error: { code, message }, id: null });

/**
 * The failure answers of a JSON-RPC route (the contract engine's `/rpc`, the memory server's `/mcp`): the bearer's
 * refusal is the platform envelope, as on every route (it is checked before anything is read); everything else the
 * route refuses is JSON-RPC's shape with the HTTP status that says why (400 for a body that is not JSON or not
 * storable text, 413, 415, 503 …), as MCP's SDK writes its own refusals.
 */
export const jsonRpcFailureResponses = { 401: FailureSchema, '4xx': JsonRpcFailure, '5xx': JsonRpcFailure };

/**
 * The route `errorHandler` that answers in that shape: -32700 for a body that is not JSON, -32600 for any other
 * refusal, -32603 for a failure of the server's own.
 *
 * @example app.post('/rpc', { schema: { response: { 200: …, ...jsonRpcFailureResponses } }, errorHandler: jsonRpcErrorHandler, handler })
 */
export function jsonRpcErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return reply.status(400).send(jsonRpcFailure(-32700, 'parse error: the body is not valid JSON'));
  const serviceError = toServiceError(error);
  logFailure(request.log, error, serviceError);
  if (serviceError.status === 401) return reply.status(401).send(failure(serviceError));
  return reply.status(serviceError.status).send(jsonRpcFailure(serviceError.status >= 500 ? -32603 : -32600, serviceError.message));
}
