import { context } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { routeOf } from '../http/route-of.ts';
import { type Context, extractTraceContext, failed, type ServiceTracing, SpanKind, SpanStatusCode } from './tracing.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The context of the request's server span, for the hooks and the handler to run in; undefined when tracing is off. */
    traceContext: Context | undefined;
  }
}

/**
 * A server span per request, continuing the trace the request's `traceparent` names (a new one without): named
 * `<METHOD> <route template>` (OpenTelemetry's HTTP server convention; never the raw URL), with the method, route,
 * path and status, failed on a 5xx. The request's hooks and its handler run with the span active, so every call they
 * make carries it on. Installed by `createServiceApp` only when tracing is on.
 */
export function installHttpTracing(app: FastifyInstance, tracing: ServiceTracing): void {
  app.decorateRequest('traceContext', undefined);
  app.addHook('onRequest', (request, reply, done) => {
    const route = routeOf(request).url;
    const { span, context: active } = tracing.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: () => ({
          'http.request.method': request.method,
          ...(route === undefined ? {} : { 'http.route': route }),
          // The path only: a query string may carry a credential.
          'url.path': request.url.split('?', 1)[0] as string,
          'url.scheme': request.protocol,
        }),
      },
      extractTraceContext(request.headers),
    );
    request.traceContext = active;
    // `close` comes after the last byte, after a hijacked reply too (the router's proxy, the gateway's streams), and
    // when the client left first. An unsampled request's span records nothing: no listener for it.
    if (span.isRecording())
      reply.raw.once('close', () => {
        const status = reply.raw.statusCode;
        span.setAttribute('http.response.status_code', status);
        if (!reply.raw.writableFinished) failed(span, new Error('the connection closed before the answer was complete'));
        else if (status >= 500) {
          span.setAttribute('error.type', String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      });
    context.with(active, done);
  });
  // The body arrives in the socket's callbacks, outside the context: the route's own hooks and its handler run in it again.
  app.addHook('preHandler', (request, _reply, done) => {
    const active = request.traceContext;
    if (active === undefined) done();
    else context.with(active, done);
  });
}
