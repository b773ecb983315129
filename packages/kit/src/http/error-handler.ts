import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/unavailable.ts';
import { failure } from '../envelope.ts';
import { ServiceError } from '../errors.ts';

// Fastify's own failures for bodies and routing, mapped onto the catalogue.
const fastifyCodes: Record<string, () => ServiceError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ServiceError('payload_too_large', 'request body is larger than this service accepts'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ServiceError('unsupported_media_type', 'request body must be application/json'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ServiceError('invalid_request', 'request body is not valid JSON'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ServiceError('invalid_request', 'request body is empty'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ServiceError('invalid_request', 'content-length does not match the body'),
};

/** Turns anything thrown during a request into a `ServiceError` whose message is safe to show. */
export function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown };
  if (fastifyError.validation) {
    return new ServiceError('invalid_request', fastifyError.message ?? 'request is invalid', { cause: error });
  }
  const mapped = fastifyError.code ? fastifyCodes[fastifyError.code] : undefined;
  if (mapped) return mapped();
  if (error instanceof SyntaxError) return new ServiceError('invalid_request', 'request body is not valid JSON', { cause: error });
  const status = fastifyError.statusCode ?? 500;
  if (status === 404) return new ServiceError('not_found', 'not found', { cause: error });
  if (status >= 400 && status < 500) return new ServiceError('invalid_request', 'request is invalid', { cause: error });
  // A lost database is not the service's fault nor the caller's: 503 with Retry-After, which clients act on.
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error);
  return new ServiceError('internal', 'internal error', { cause: error });
}

/**
 * Logs a failure as the error handler does: a deliberate 503 (a standby refusing writes) is expected traffic and a
 * flood of 429s is one line each, so neither gets an error with a stack; only unexpected failures do. Also for the
 * failures a request answers inside its body (a batch's items).
 */
export function logFailure(log: FastifyBaseLogger, error: unknown, serviceError = toServiceError(error)): void {
  if (serviceError.code === 'unavailable' && error instanceof ServiceError)
    log.warn({ code: serviceError.code, reason: serviceError.message }, 'request deferred');
  // The database's own words (57P01, ECONNREFUSED) for the operator; no stack, as every request says the same.
  else if (serviceError.code === 'unavailable') log.warn({ code: serviceError.code, reason: serviceError.message, cause: causeOf(error) }, 'request deferred');
  else if (serviceError.status >= 500 && serviceError.code !== 'not_implemented') log.error({ err: error }, 'request failed');
  else if (serviceError.code === 'rate_limited') log.debug({ code: serviceError.code }, 'request rate-limited');
  else log.info({ code: serviceError.code, reason: serviceError.message }, 'request refused');
}

function causeOf(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return [code, message].filter((part) => typeof part === 'string' && part !== '').join(' ');
}

/**
 * Installs the envelope error handler and the unknown-route handler. Stack traces and SQL text go to the log only. A
 * refusal whose details carry `retry_after` (seconds) is also sent with that `Retry-After` header.
 */
export function installErrorHandling(app: FastifyInstance, render: (error: ServiceError) => unknown = failure): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const serviceError = toServiceError(error);
    logFailure(request.log, error, serviceError);
    const retryAfter = serviceError.details?.retry_after;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    return reply.status(serviceError.status).send(render(serviceError));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new ServiceError('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).send(render(error));
  });
}
