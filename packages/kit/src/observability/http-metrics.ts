import type { FastifyInstance, FastifyRequest } from 'fastify';
import { safeEqual } from '../auth/safe-equal.ts';
import { ServiceError } from '../errors.ts';
import { routeOf } from '../http/route-of.ts';
import { bearerFrom } from '../http/transport-bearer.ts';
import type { CounterChild, HistogramChild } from './hot-metrics.ts';
import { boundedLabel, metricsPath, type ServiceMetrics } from './metrics.ts';

const httpMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
type Labels = 'method' | 'route' | 'status_class';
// By the status' hundreds: no string made per request; a status past 599 is `other`.
const statusClasses: readonly string[] = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

interface RouteSeries {
  requests: CounterChild;
  duration: HistogramChild;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** When the request arrived (performance.now()), for the latency histogram; undefined once counted. */
    metricsStartedAt: number | undefined;
  }
  interface FastifyContextConfig {
    /**
     * False: this app does not count the route's requests, because another app answers and counts them under their
     * own route templates (settlement's front threads relay every route they do not serve to the sequencer thread's
     * app); counting them here too would count each request twice, under a catch-all template.
     */
    httpMetrics?: boolean;
  }
}

/**
 * Requests by method, route template and status class, their latency, and the requests in flight. The route is the
 * template Fastify matched (`/v1/alarms/:id`), `unmatched` for a path no route serves: never the raw URL, which a
 * caller could fill with anything.
 */
export function installHttpMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  const requests = metrics.counter<Labels>({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status class',
    labelNames: ['method', 'route', 'status_class'],
  });
  const duration = metrics.histogram<Labels>({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency from arrival to the last byte written, by method, route template and status class',
    labelNames: ['method', 'route', 'status_class'],
  });
  // A number read when scraped: a gauge's inc and dec would hash its (empty) label set twice a request.
  let inFlight = 0;
  metrics.gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests received and not yet answered',
    collect() {
      this.set(inFlight);
    },
  });
  app.decorateRequest('metricsStartedAt', undefined);
  app.addHook('onRequest', (request, _reply, done) => {
    if (routeOf(request).config?.httpMetrics !== false) {
      request.metricsStartedAt = performance.now();
      inFlight++;
    }
    done();
  });
  // Each route's series, by method and status class, found once: a request steps them without building its labels
  // or their key (garbage a busy service's young collections would step over).
  const seriesOfRoute = new WeakMap<object, Map<string, RouteSeries[]>>();
  const seriesOf = (request: FastifyRequest, status: number): RouteSeries => {
    const route = routeOf(request);
    const method = boundedLabel(request.method, httpMethods);
    const statusClass = Math.min(Math.max(Math.floor(status / 100), 0), statusClasses.length);
    // Fastify gives every route a config object of its own: the route's identity here.
    let byMethod = seriesOfRoute.get(route.config);
    if (byMethod === undefined) {
      byMethod = new Map();
      seriesOfRoute.set(route.config, byMethod);
    }
    let byClass = byMethod.get(method);
    if (byClass === undefined) {
      byClass = [];
      byMethod.set(method, byClass);
    }
    let series = byClass[statusClass];
    if (series === undefined) {
      const labels = [method, route.url ?? 'unmatched', statusClasses[statusClass] ?? 'other'];
      series = { requests: requests.labels(...labels), duration: duration.labels(...labels) };
      byClass[statusClass] = series;
    }
    return series;
  };
  const finish = (request: FastifyRequest, status: number) => {
    const startedAt = request.metricsStartedAt;
    if (startedAt === undefined) return;
    request.metricsStartedAt = undefined;
    inFlight--;
    const series = seriesOf(request, status);
    series.requests.inc();
    series.duration.observe((performance.now() - startedAt) / 1000);
  };
  app.addHook('onResponse', (request, reply, done) => {
    finish(request, reply.statusCode);
    done();
  });
  // A caller that hung up is counted once, as 499 (nginx's "client closed request"), and leaves the in-flight gauge.
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, 499);
    done();
  });
}

/**
 * `GET /metrics` in Prometheus' text format, behind its own bearer (PLATFORM_METRICS_TOKEN, which `platform up` derives
 * from the root secret), compared in constant time. Never public: with no token the route is not served (404). It is
 * left out of the API description, which documents the service's API, not its operations endpoint. Asked with
 * `Accept: application/json` (a parent summing its children's metrics, `aggregate-metrics.ts`; Prometheus never asks
 * so) it answers prom-client's JSON form, which keeps each metric's type and how it is summed.
 */
export function registerMetricsRoute(app: FastifyInstance, options: { metrics: ServiceMetrics; token: string }): void {
  if (options.token === '') return;
  app.get(metricsPath, { schema: { hide: true } }, async (request: FastifyRequest, reply) => {
    requireMetricsBearer(request, options.token);
    if (request.headers.accept === 'application/json') return reply.type('application/json').send(JSON.stringify(await options.metrics.json()));
    const text = await options.metrics.render();
    return reply.type(options.metrics.contentType).send(text);
  });
}

/** Throws 401 (in the envelope) unless the request carries the metrics bearer: for any route that serves metrics. */
export function requireMetricsBearer(request: FastifyRequest, token: string): void {
  const presented = bearerFrom(request);
  if (presented === undefined) throw new ServiceError('unauthorized', 'missing metrics bearer (Authorization: Bearer <PLATFORM_METRICS_TOKEN>)');
  if (!safeEqual(presented, token)) throw new ServiceError('unauthorized', 'invalid metrics bearer');
}
