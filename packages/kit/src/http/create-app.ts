import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { FailureSchema, failure } from '../envelope.ts';
import { invalidRequest, ServiceError } from '../errors.ts';
import { installHttpMetrics, registerMetricsRoute } from '../observability/http-metrics.ts';
import { installHttpTracing } from '../observability/http-tracing.ts';
import { createServiceMetrics, type ServiceMetrics } from '../observability/metrics.ts';
import type { ServiceTracing } from '../observability/tracing.ts';
import { installErrorHandling, logFailure, toServiceError } from './error-handler.ts';
import { inputProblem } from './input-text.ts';
import { type ApiInfo, installApiDocs } from './openapi.ts';
import { installResponseCheck } from './response-check.ts';
import { routeOf } from './route-of.ts';
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
  /**
   * The envelope of the routes under a URL, for failures Fastify finds before any route is matched (a path that is not
   * valid percent-encoding, a path parameter past `maxPathParamLength`): a scope that renders its own failures (the
   * gateway's `/v1`, in OpenAI's shape) names its envelope here; undefined falls back to `failureEnvelope`.
   */
  failureEnvelopeAt?: (url: string) => FailureEnvelope | undefined;
  /**
   * The service's metrics (`observability/metrics.ts`): with `metricsToken` set the app counts its requests there and
   * serves them at `GET /metrics`. Absent: a registry of the app's own, not served.
   */
  metrics?: ServiceMetrics;
  /** PLATFORM_METRICS_TOKEN, the bearer `/metrics` asks for; empty or absent: `/metrics` is not served. */
  metricsToken?: string;
  /**
   * Count requests into `metrics` although this app does not serve them (the router's public listener, whose metrics
   * its internal listener serves); by default requests are counted exactly when `metricsToken` is set.
   */
  countRequests?: boolean;
  /** The service's tracing (`observability/tracing.ts`): a server span per request when it is on; absent or off, no hook is added. */
  tracing?: ServiceTracing;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's metrics, for its routes to add their own (`createServiceApp`'s `metrics`). */
    metrics: ServiceMetrics;
  }
}

/**
 * What every service's app takes for its metrics and traces, made by its main.ts (`createServiceMetrics`,
 * PLATFORM_METRICS_TOKEN, `startTracing`); each absent in a test that does not read them.
 */
export interface ObservabilityDeps {
  /** The service's metrics (the database's and its components' among them). */
  metrics?: ServiceMetrics;
  /** PLATFORM_METRICS_TOKEN: `GET /metrics` is served behind it; empty or absent, not served. */
  metricsToken?: string;
  /** A server span per request (OTEL_* settings); absent: off. */
  tracing?: ServiceTracing;
}

/** The `createServiceApp` options of a service's `ObservabilityDeps`, those it was given only. */
export function observabilityOptions(deps: ObservabilityDeps): ObservabilityDeps {
  return {
    ...(deps.metrics && { metrics: deps.metrics }),
    ...(deps.metricsToken !== undefined && { metricsToken: deps.metricsToken }),
    ...(deps.tracing && { tracing: deps.tracing }),
  };
}

/** How a service renders a `ServiceError`, and the response schema that describes (and serialises) what it renders. */
export interface FailureEnvelope {
  render: (error: ServiceError) => unknown;
  schema: TSchema;
}

/** The kit's `{ok: false, error: {code, message, retryable, ...}}`. */
export const kitFailureEnvelope: FailureEnvelope = { render: failure, schema: FailureSchema };

/**
 * The longest path parameter the router matches (Fastify's default is 100, shorter than the DIDs and names the
 * services document). A route's own `params` schema sets the limit it documents (a DID's 256, say); past this one
 * a request is refused before routing, in the service's envelope, as 400 `invalid_request`.
 */
export const maxPathParamLength = 1024;

/**
 * A Fastify instance with the shared conventions: TypeBox schemas, strict body validation,
 * envelope errors for every failure, empty JSON bodies treated as absent, and the API description of every route
 * added later (`GET /openapi.json`, `GET /docs`).
 *
 * @example const app = createServiceApp({ logger, bodyLimit: 256 * 1024, api: { title: 'scheduler', version: '0.1.0' } })
 */
export function createServiceApp(options: CreateAppOptions) {
  const envelope = options.failureEnvelope ?? kitFailureEnvelope;
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimit,
    // Fastify's own 503 while closing is a body of its own shape; the hook below answers in the service's envelope.
    return503OnClosing: false,
    trustProxy: options.trustProxy ?? false,
    routerOptions: { maxParamLength: maxPathParamLength },
    // Fastify's own bodies for these are not the service's envelope.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      const serviceError = frameworkError(error);
      logFailure(request.log, error, serviceError);
      const render = (options.failureEnvelopeAt?.(request.url) ?? envelope).render;
      return reply.status(serviceError.status).type('application/json').send(render(serviceError));
    },
    clientErrorHandler: (error, socket) => answerClientError(error, socket, envelope.render),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('routeOptionsRead', undefined);
  // First, so every hook after it runs inside the request's span.
  if (options.tracing?.enabled) installHttpTracing(app, options.tracing);
  const metrics = options.metrics ?? createServiceMetrics(options.api?.title ?? 'service');
  app.decorate('metrics', metrics);
  // Counted only where they are served: a service nobody scrapes pays no hook per request.
  if (options.countRequests ?? Boolean(options.metricsToken)) installHttpMetrics(app, metrics);
  refuseWhileClosing(app);
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
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && routeOf(request).schema?.body !== undefined) request.body = {};
    done(unstorableInput(request));
  });
  installErrorHandling(app, envelope.render);
  installResponseCheck(app);
  registerMetricsRoute(app, { metrics, token: options.metricsToken ?? '' });
  return app;
}

export type ServiceApp = ReturnType<typeof createServiceApp>;

/**
 * The kit's edge check of what a caller sent (see `input-text.ts`): path parameters, the query string and a parsed JSON
 * body (a route that takes bytes or a stream is left to its own parser) hold no NUL, no lone surrogate and no nesting
 * past the limit, before validation and before any handler, database or shared writer sees them.
 */
function unstorableInput(request: FastifyRequest): ServiceError | undefined {
  // An unknown route is a 404 whatever was sent: the not-found handler answers it.
  if (request.is404) return undefined;
  return (
    inputProblem(request.params, 'params') ??
    inputProblem(request.query, 'querystring') ??
    (isParsedJson(request.body) ? (bodyNotTaken(request) ?? inputProblem(request.body, 'body')) : undefined)
  );
}

/**
 * A JSON body sent to a route that declares none is refused, as an unknown member of a declared body is: whatever
 * the caller meant it to do, nothing reads it (an empty object, which HTTP clients send with a bare POST, is no body).
 * So every body a route reads is in its schema and in the API description (`validatedByHandler` where the route
 * checks it itself).
 */
function bodyNotTaken(request: FastifyRequest) {
  if (routeOf(request).schema?.body !== undefined) return undefined;
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0) return undefined;
  return invalidRequest(`${request.method} ${routeOf(request).url} takes no request body`);
}

function isParsedJson(body: unknown): boolean {
  return (
    body !== null && body !== undefined && !Buffer.isBuffer(body) && !(body instanceof Uint8Array) && typeof (body as { pipe?: unknown }).pipe !== 'function'
  );
}

function frameworkError(error: FastifyError): ServiceError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new ServiceError('invalid_request', `a path parameter is longer than ${maxPathParamLength} characters`, { cause: error });
  if (error.code === 'FST_ERR_BAD_URL') return new ServiceError('invalid_request', 'the path is not valid percent-encoded UTF-8', { cause: error });
  return toServiceError(error);
}

/**
 * A request Node's HTTP parser refused (malformed, headers too large, too slow to arrive) gets the envelope too, written
 * on the socket as Node's own answer would be, then the connection ends: nothing more can be read from it reliably.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex, render: (error: ServiceError) => unknown): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request did not arrive in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'the request headers are larger than this service accepts']
        : [400, 'the request is not valid HTTP'];
  const body = JSON.stringify(render(new ServiceError('invalid_request', message)));
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}

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
  // Callback hooks, as the kit's others on every request: an async one costs a promise and a microtask each time.
  app.addHook('onRequest', (_request, _reply, done) => {
    done(closing ? new ServiceError('unavailable', 'the service is shutting down; retry the request') : undefined);
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
