import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
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
  /** The failure body for a service whose spec names another envelope (the marketplace); the kit's `failure` by default. */
  renderFailure?: (error: ServiceError) => unknown;
}

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
  // Before any route, so its onRoute hook sees them all.
  if (options.api) installApiDocs(app, options.api);
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
  installErrorHandling(app, options.renderFailure);
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
