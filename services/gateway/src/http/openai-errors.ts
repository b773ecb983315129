import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '@platform/kit/db/unavailable';
import { ServiceError } from '@platform/kit/errors';
import { declareScopeFailures, type FailureEnvelope } from '@platform/kit/http/create-app';
import { nullable } from '@platform/kit/wire-schemas';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

/**
 * The gateway's errors use OpenAI's shape, `{error: {message, type, code, param}}`, not the platform envelope: every
 * OpenAI SDK reads `error.message` and `error.code` from it and raises them to the caller as they are.
 */
export type OpenAiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'insufficient_quota'
  | 'server_error'
  | 'upstream_error'
  | 'service_unavailable';

const openAiErrorTypes: OpenAiErrorType[] = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'insufficient_quota',
  'server_error',
  'upstream_error',
  'service_unavailable',
];

/** The response schema of a `/v1` failure. An upstream's own refusal is passed on as it came, usually in this shape too. */
export const OpenAiErrorSchema = Type.Object(
  {
    error: Type.Object(
      {
        message: Type.String(),
        type: Type.Unsafe<OpenAiErrorType>({ type: 'string', enum: openAiErrorTypes }),
        code: Type.String({ description: 'What went wrong, for programs: budget_exhausted, model_not_priced, ...' }),
        param: nullable(Type.String({ description: 'The request field at fault' })),
      },
      { additionalProperties: true, description: 'Some codes add members (spent_credit and limit_credit on budget_exhausted)' },
    ),
  },
  { description: 'OpenAI’s error shape, which the OpenAI SDKs read' },
);

export interface GatewayErrorOptions {
  param?: string;
  /** Extra members of the error object, such as `spent_credit` and `limit_credit` on a 429. */
  extra?: Record<string, string>;
  /** Sent as `x-should-retry: false`, which the OpenAI SDKs obey: a retry cannot succeed (budget spent, gateway off). */
  noRetry?: boolean;
  /** Sent as `Retry-After` (seconds): when a retry can succeed (the database is back). */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/** The one error type the gateway's handlers throw; `message` reaches the caller, so it never holds a secret. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: OpenAiErrorType;
  readonly code: string;
  readonly param: string | null;
  readonly extra: Record<string, string>;
  readonly noRetry: boolean;
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, type: OpenAiErrorType, code: string, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = options.param ?? null;
    this.extra = options.extra ?? {};
    this.noRetry = options.noRetry ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  body(): { error: Record<string, string | null> } {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param, ...this.extra } };
  }
}

export function badRequest(code: string, message: string, param?: string): GatewayError {
  return new GatewayError(400, 'invalid_request_error', code, message, param === undefined ? {} : { param });
}

/** Fastify's own body and validation failures, in the OpenAI shape. */
function fromFastify(error: Partial<FastifyError> & { validation?: Array<{ instancePath?: string }> }): GatewayError {
  if (error.validation) {
    const path = error.validation[0]?.instancePath?.replace(/^\//, '').replaceAll('/', '.');
    return badRequest('invalid_request', error.message ?? 'request is invalid', path || undefined);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError(413, 'invalid_request_error', 'payload_too_large', 'request body is larger than this gateway accepts (GATEWAY_MAX_BODY_BYTES)');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(415, 'invalid_request_error', 'unsupported_media_type', 'request body must be application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('invalid_json', 'request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('invalid_request', 'content-length does not match the body');
  }
  if (error instanceof SyntaxError) return badRequest('invalid_json', 'request body is not valid JSON');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return badRequest('invalid_request', 'request is invalid');
  if (isDatabaseUnavailable(error))
    return new GatewayError(503, 'service_unavailable', 'database_unavailable', 'the gateway’s database cannot be reached; retry shortly', {
      retryAfterSeconds: databaseRetryAfterSeconds,
    });
  return new GatewayError(500, 'server_error', 'internal_error', 'internal error');
}

export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof ServiceError) return fromServiceError(error);
  return fromFastify(error as Partial<FastifyError>);
}

/** A refusal of the kit's (its edge check of the input, a failure found before routing) in the OpenAI shape. */
function fromServiceError(error: ServiceError): GatewayError {
  const field = error.details?.field;
  const param = typeof field === 'string' ? field : undefined;
  return new GatewayError(error.status, openAiTypeOf(error.status), error.code, error.message, param === undefined ? {} : { param });
}

function openAiTypeOf(status: number): OpenAiErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 503) return 'service_unavailable';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** The envelope of `/v1` for the kit's `failureEnvelopeAt`: what Fastify refuses before routing, in OpenAI's shape. */
export const openAiFailureEnvelope: FailureEnvelope = { render: (error) => fromServiceError(error).body(), schema: OpenAiErrorSchema };

/** Writes a gateway error; also used by hooks that answer before any route runs (the kill switch). */
export function sendGatewayError(reply: FastifyReply, error: GatewayError, options: { asText?: boolean } = {}): FastifyReply {
  if (error.noRetry) reply.header('x-should-retry', 'false');
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .status(error.status)
    .type('application/json')
    .send(options.asText ? JSON.stringify(error.body()) : error.body());
}

/** Installs the OpenAI-shaped error and not-found handlers on one encapsulated scope (the /v1 routes). */
export function installOpenAiErrors(scope: FastifyInstance): void {
  declareScopeFailures(scope, OpenAiErrorSchema);
  scope.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const gatewayError = toGatewayError(error);
    if (gatewayError.status >= 500 && !(error instanceof GatewayError)) request.log.error({ err: error }, 'request failed');
    else if (gatewayError.status >= 500) request.log.warn({ code: gatewayError.code, reason: gatewayError.message }, 'request not served');
    else request.log.info({ code: gatewayError.code, reason: gatewayError.message }, 'request refused');
    return sendGatewayError(reply, gatewayError);
  });
  scope.setNotFoundHandler((request, reply) =>
    sendGatewayError(reply, new GatewayError(404, 'not_found_error', 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}
