import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { FailureSchema, failure } from '../envelope.ts';
import { ServiceError } from '../errors.ts';
import { installErrorHandling } from './error-handler.ts';
import { type ApiInfo, installApiDocs } from './openapi.ts';
import { installResponseCheck } from './response-check.ts';
import { validatorCompiler } from './validation.ts';

export interface CreateAppOptions {
  logger: FastifyBaseLogger;
  /**
   * The service's name and version, for its API description at `/openapi.json` and `/docs`; undefined for an app
   * that serves only part of a service's routes and leaves the rest, the description included, to another (settlement's front threads).
   */
  api: ApiInfo | undefined;
  /** Largest accepted request body in bytes; larger bodies get 413 `payload_too_large`. */
  bodyLimit: number;
  /** Believe X-Forwarded-For (request.ip) from a reverse proxy; off by default so clients cannot pick their address. */
  trustProxy?: boolean;
  /** The failure body for a service whose spec names another envelope (the marketplace); the kit's by default. */
  failureEnvelope?: FailureEnvelope;
}

/** How a service renders a `ServiceError`, and the response schema that describes (and serialises) what it renders. */
export interface FailureEnvelope {
  render: (error: ServiceError) => unknown;
  schema: TSchema;
}

/** The kit's `{ok: false, error: {code, message, retryable, ...}}`. */
export const kitFailureEnvelope: FailureEnvelope = { render: failure, schema: FailureSchema };

/**
 * A Fastify instance with the shared conventions: TypeBox schemas, strict body validation,
 * envelope errors for every failure, empty JSON bodies treated as absent, and the API description of every route
 * added later (`GET /openapi.json`, `GET /docs`).
 *
 * @example const app = createServiceApp({ logger, bodyLimit: 256 * 1024, api: { title: 'scheduler', version: '0.1.0' } })
 */
export function createServiceApp(options: CreateAppOptions) {
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimit,
    // Fastify's own 503 while closing is a body of its own shape; the hook below answers in the service's envelope.
    return503OnClosing: false,
    trustProxy: options.trustProxy ?? false,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  refuseWhileClosing(app);
  const envelope = options.failureEnvelope ?? kitFailureEnvelope;
  // Before any route, so their onRoute hooks see them all.
  if (options.api) installApiDocs(app, options.api);
  app.addHook('onRoute', (route) => declareFailures(route, envelope.schema));
  // JSON only: Fastify would otherwise accept text/plain bodies and fail them later with a confusing validation message.
  app.removeContentTypeParser('text/plain');
  // A DELETE or POST sent with a JSON content type but no body is common from HTTP clients; treat it as "no body".
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || body === undefined) return done(null, undefined);
    defaultJsonParser(request, body as string, done);
  });
  // A POST with no body at all reaches validation as `undefined`; read it as `{}` so a route whose fields are all
  // optional accepts it and one with required fields names the missing field rather than "body must be object".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body !== undefined) request.body = {};
  });
  installErrorHandling(app, envelope.render);
  installResponseCheck(app);
  return app;
}

export type ServiceApp = ReturnType<typeof createServiceApp>;

/**
 * A request that arrives on a kept-alive connection while the service drains (after `close()` began) gets 503
 * `unavailable`, retryable, in the service's own envelope, with `Connection: close` (Fastify sets it), so a caller
 * or the router can tell it from a crash and retry elsewhere. Requests already in flight finish as usual.
 */
function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async () => {
    if (closing) throw new ServiceError('unavailable', 'the service is shutting down; retry the request');
  });
}

/**
 * Every route's 4xx and 5xx answers are the service's failure envelope, so the API description says what a refusal
 * looks like and the serialiser writes it from the schema. A route that answers a failure of its own (the health
 * check's 503 with its data, the gateway's OpenAI errors) declares that status itself, and its declaration wins.
 */
function declareFailures(route: RouteOptions, schema: TSchema): void {
  const declared = (route.schema?.response ?? {}) as Record<string, unknown>;
  const failures = Object.fromEntries(failureRanges.filter((range) => declared[range] === undefined).map((range) => [range, schema]));
  route.schema = { ...route.schema, response: { ...failures, ...declared } };
  serviceEnvelopes.add(schema);
}

const failureRanges = ['4xx', '5xx'];
// The envelopes createServiceApp declared, so a scope can tell them from a failure a route declared itself.
const serviceEnvelopes = new WeakSet<object>();

/**
 * The routes of this scope answer failures in another shape than the service's envelope (the gateway's `/v1` speaks
 * OpenAI's errors, rendered by the scope's own error handler): they declare `schema` for 4xx and 5xx instead, unless a
 * route declared its own. Call it on the scope before its routes are added.
 *
 * @example declareScopeFailures(scope, OpenAiErrorSchema)
 */
export function declareScopeFailures(scope: FastifyInstance, schema: TSchema): void {
  scope.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!response) return;
    for (const range of failureRanges) if (serviceEnvelopes.has(response[range] as object)) response[range] = schema;
  });
}
