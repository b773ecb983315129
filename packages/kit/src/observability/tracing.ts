import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Env } from '../config.ts';
import { readTracingSettings } from './tracing-settings.ts';

/**
 * OpenTelemetry traces, one TracerProvider per service (`platform up` runs every service in one process, each with
 * its own `service.name`), switched on by the standard OTEL_* variables (tracing-settings.ts) and off otherwise.
 *
 * Off costs next to nothing: the SDK is never loaded (tracing-sdk.ts is imported only when a service switches
 * tracing on), no context manager is installed, `createServiceApp` adds no hooks, and every helper here returns at
 * its first check of `tracingOn`. On, the process has one AsyncLocalStorage context manager and the W3C trace
 * context propagator; the active context carries the span and the service whose span it is, so the kit's HTTP
 * clients (`startClientSpan`, `tracedFetch`, the JSON client) start their client spans in that service's provider and
 * put `traceparent` on the request without being told which service they serve.
 */
export interface ServiceTracing {
  readonly service: string;
  /** False for `tracingOff`: nothing is recorded. */
  readonly enabled: boolean;
  /**
   * Runs `work` in a new span of this service, a child of the active span (or the first of a trace), and ends it
   * when `work` settles; a throw is recorded on the span and passed on.
   */
  span<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T> | T): Promise<T>;
  /** A span of this service under `parent`, and the context that makes it the active one: for a span `work` cannot bound (a request's). */
  startSpan(name: string, options: SpanOptions, parent: Context): { span: Span; context: Context };
  /** Exports what is buffered and stops: the last of the service's shutdown steps (`serve`'s `tracing`). */
  shutdown(): Promise<void>;
}

export interface SpanOptions {
  kind?: SpanKind;
  /**
   * The span's attributes; a function is called only when the span is recorded, for attributes that cost something
   * to build on a hot path (the samplers the platform offers decide without them).
   */
  attributes?: Attributes | (() => Attributes);
  /** The first span of a new trace, whatever span is active. */
  root?: boolean;
  /** Contexts (`captureTraceContext`) whose spans this one links to: a batch's, to the items it carries. */
  links?: readonly (Context | undefined)[];
}

export type { Attributes, Context, Span };
export { SpanKind, SpanStatusCode };

/** A span that records nothing, handed to `work` when tracing is off. */
export const noSpan: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Tracing switched off: `span` only runs `work`. */
export const tracingOff: ServiceTracing = {
  service: 'none',
  enabled: false,
  span: async (_name, _options, work) => work(noSpan),
  startSpan: (_name, _options, parent) => ({ span: noSpan, context: parent }),
  shutdown: async () => {},
};

// True once a service of this process switched tracing on: every helper's first (and, off, only) check.
let tracingOn = false;
// The service whose span is active, beside the span itself in the context.
const ownerKey = createContextKey('platform.tracing.service');

/**
 * The service's tracing from its environment: `tracingOff` unless OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; the SDK is loaded only then. A bad setting is a ConfigError.
 *
 * @example const tracing = await startTracing(env, 'scheduler')
 */
export async function startTracing(env: Env, service: string): Promise<ServiceTracing> {
  const settings = readTracingSettings(env);
  if (settings === undefined) return tracingOff;
  const { startProvider } = await import('./tracing-sdk.ts');
  return serviceTracing(service, startProvider(settings, service));
}

/** A service's tracing over its provider's tracer (tracing-sdk.ts makes the provider; a test may hand its own). */
export function serviceTracing(service: string, provider: { tracer: Tracer; shutdown(): Promise<void> }): ServiceTracing {
  tracingOn = true;
  const { tracer } = provider;
  const self: ServiceTracing = {
    service,
    enabled: true,
    span(name, options, work) {
      const active = context.active();
      const started = self.startSpan(name, options, active);
      // Under an unrecorded span of this service the child is that span and its context the active one (startSpan):
      // nothing to end and no context to enter, so `work` runs as it would with tracing off.
      if (started.context === active) return settled(() => work(started.span));
      // No async wrapper of its own: `work`'s promise is ended on, not awaited in another one (two microtask turns fewer a span).
      return context.with(started.context, () =>
        settled(() => work(started.span)).then(
          (value) => {
            started.span.end();
            return value;
          },
          (error: unknown) => {
            failed(started.span, error);
            started.span.end();
            throw error;
          },
        ),
      );
    },
    startSpan(name, options, parent) {
      const base = options.root === true ? ROOT_CONTEXT : parent;
      const parentSpan = trace.getSpan(base);
      // Under an unrecorded span of this process, none of the samplers the platform offers records a child: the
      // parent-based ones follow the parent, the ratio sampler decides by the trace id as it did for the parent, and
      // always_on records every span (always_off none). So the SDK is not asked (no span id, no sampler, no span
      // object): the parent stands in for the child, and calls made under it pass the trace on, unsampled.
      if (parentSpan !== undefined && !parentSpan.isRecording() && parentSpan.spanContext().isRemote !== true && isSpanContextValid(parentSpan.spanContext()))
        return { span: parentSpan, context: base.getValue(ownerKey) === self ? base : new ChainedContext(base, ownerKey, self) };
      const { attributes } = options;
      const links = options.links === undefined ? undefined : linksTo(options.links);
      // The attributes are set once the span is recorded (the samplers the platform offers decide without them): the
      // SDK would copy ones given at the start twice over, and a span it does not record has none to build.
      const span = tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, links }, base);
      if (attributes !== undefined && span.isRecording()) span.setAttributes(typeof attributes === 'function' ? attributes() : attributes);
      return { span, context: trace.setSpan(new ChainedContext(base, ownerKey, self), span) };
    },
    shutdown: () => provider.shutdown(),
  };
  return self;
}

/** Marks a span failed by `error` (its type and message; the stack stays in the logs). */
export function failed(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setAttribute('error.type', error instanceof Error ? error.name : 'error');
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 500) });
}

/** The tracing of the service whose span is active, if any. */
function owner(): ServiceTracing | undefined {
  return context.active().getValue(ownerKey) as ServiceTracing | undefined;
}

/**
 * Runs `work` in a span of the service whose span is active (a rail step inside a request, a tool call inside a
 * step); with no such span, or tracing off, it only runs `work`.
 *
 * @example await inSpan('tool payments.pay', { attributes: { 'gen_ai.tool.name': 'payments.pay' } }, () => provider.call(tool, args))
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T> | T): Promise<T> {
  const tracing = tracingOn ? owner() : undefined;
  return tracing === undefined ? settled(() => work(noSpan)) : tracing.span(name, options, work);
}

/** Whether a captured context's span is sampled: recorded here, or by the caller that sent it (a remote parent). */
export function sampledIn(captured: Context | undefined): boolean {
  return sampledSpanOf(captured) !== undefined;
}

/** The span context of a captured context, when it is a valid, sampled one. */
function sampledSpanOf(captured: Context | undefined): SpanContext | undefined {
  const spanContext = captured === undefined ? undefined : trace.getSpanContext(captured);
  return spanContext !== undefined && isSpanContextValid(spanContext) && (spanContext.traceFlags & TraceFlags.SAMPLED) !== 0 ? spanContext : undefined;
}

/** The sampled spans of `contexts`, as links (an unsampled span is in no collector to link to), each once. */
function linksTo(contexts: readonly (Context | undefined)[]): { context: SpanContext }[] {
  const seen = new Set<string>();
  const links: { context: SpanContext }[] = [];
  for (const captured of contexts) {
    const spanContext = sampledSpanOf(captured);
    if (spanContext === undefined || seen.has(spanContext.spanId)) continue;
    seen.add(spanContext.spanId);
    links.push({ context: spanContext });
  }
  return links;
}

/** `run`'s promise itself (no wrapper around it), a value as a resolved promise, a throw as a rejected one. */
function settled<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * A context one value longer than its parent, made in constant time: the API's own copies its parent's whole map
 * for each value set, and every span of the kit's sets two (the span, and the service whose span it is).
 */
class ChainedContext implements Context {
  readonly #parent: Context;
  readonly #key: symbol;
  readonly #value: unknown;

  constructor(parent: Context, key: symbol, value: unknown) {
    this.#parent = parent;
    this.#key = key;
    this.#value = value;
  }

  getValue(key: symbol): unknown {
    return key === this.#key ? this.#value : this.#parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return new ChainedContext(this, key, value);
  }

  // Deleting is setting undefined: getValue answers the same.
  deleteValue(key: symbol): Context {
    return new ChainedContext(this, key, undefined);
  }
}

/** A client span: ended once the answer's status is known, or with the error that prevented one. */
export interface ClientSpan {
  end(status?: number, error?: unknown): void;
}

const noClientSpan: ClientSpan = { end() {} };

/**
 * Starts the client span of an HTTP call the active service makes and writes `traceparent` (and `tracestate`) for it
 * into `headers`, replacing any a caller forwarded; off, or outside any span, it changes nothing and returns a span
 * whose `end` does nothing. The span is named `<METHOD>` (OpenTelemetry's HTTP client convention) unless `name` says more.
 *
 * @example const span = startClientSpan('POST', url, headers); ... span.end(answer.status)
 */
export function startClientSpan(method: string, url: URL | string, headers: Record<string, unknown>, name?: string): ClientSpan {
  if (!tracingOn) return noClientSpan;
  const tracing = owner();
  if (tracing === undefined) return noClientSpan;
  const { span, context: active } = tracing.startSpan(
    name ?? method,
    {
      kind: SpanKind.CLIENT,
      attributes: () => {
        const target = typeof url === 'string' ? new URL(url) : url;
        return {
          'http.request.method': method,
          'server.address': target.hostname,
          'server.port': portOf(target),
          // Without the query, which may carry a credential.
          'url.full': `${target.origin}${target.pathname}`,
        };
      },
    },
    context.active(),
  );
  propagation.inject(active, headers);
  return clientSpanOutcome(span, true);
}

/** The port a URL names, or its scheme's. */
function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80));
}

/**
 * A client span's `end`, counted once: the answer's status, or the error that prevented one; `ends` false leaves
 * ending the span to its owner (continueClientSpan).
 */
function clientSpanOutcome(span: Span, ends: boolean): ClientSpan {
  let ended = false;
  return {
    end(status, error) {
      if (ended) return;
      ended = true;
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (error !== undefined) failed(span, error);
      // A client span fails on any 4xx or 5xx (the HTTP semantic conventions; a server span only on 5xx).
      else if (status !== undefined && status >= 400) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      if (ends) span.end();
    },
  };
}

/**
 * For a call whose client span is already the active span, a model call's `chat <model>` span (the GenAI conventions
 * make the inference span the client span, with the server's address and port): writes its `traceparent` into
 * `headers` and puts the server on it, instead of starting an HTTP client span under it that would repeat it. The
 * gateway calls its upstream so: one span a call fewer on its hottest path. `end` records the answer's status, or the
 * error, on that span and leaves ending it to its owner. Off, or outside any span, it changes nothing.
 *
 * @example const call = continueClientSpan(base, headers); ... call.end(answer.status)
 */
export function continueClientSpan(server: URL, headers: Record<string, unknown>): ClientSpan {
  if (!tracingOn || owner() === undefined) return noClientSpan;
  const active = context.active();
  const span = trace.getSpan(active) as Span;
  if (span.isRecording()) span.setAttributes({ 'server.address': server.hostname, 'server.port': portOf(server) });
  propagation.inject(active, headers);
  return clientSpanOutcome(span, false);
}

/**
 * `fetch` with a client span and `traceparent` when tracing is on (exactly `fetch` when it is off): for the clients
 * that take a `fetch` (@platform/client's, the MCP SDK's transport) and the services' own calls.
 *
 * @example new SchedulerClient({ baseUrl, key, fetch: tracedFetch })
 */
export function tracedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  if (!tracingOn || owner() === undefined) return fetch(input, init);
  const url = input instanceof Request ? input.url : input;
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const carrier: Record<string, string> = {};
  const span = startClientSpan(method, url, carrier);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
  return fetch(input, { ...init, headers }).then(
    (response) => {
      span.end(response.status);
      return response;
    },
    (error: unknown) => {
      span.end(undefined, error);
      throw error;
    },
  );
}

/** The trace context a request arrived with (`traceparent`, `tracestate`), or the root context when it carried none. */
export function extractTraceContext(headers: Record<string, unknown>): Context {
  if (!tracingOn) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers);
}

/**
 * The active span's `traceparent` and `tracestate`, for a carrier that is not an HTTP request (an MCP call's `_meta`
 * on stdio); undefined when no span is active.
 */
export function traceCarrier(): Record<string, string> | undefined {
  if (!tracingOn || !isSpanContextValid(trace.getSpanContext(context.active()) ?? INVALID_SPAN_CONTEXT)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The active context, to run later work in (an intent queued now and walked after the request that made it). */
export function captureTraceContext(): Context | undefined {
  return tracingOn ? context.active() : undefined;
}

/** Runs `work` in a captured context; undefined: the root context (none of the caller's spans). */
export function runInTraceContext<T>(captured: Context | undefined, work: () => T): T {
  if (!tracingOn) return work();
  return context.with(captured ?? ROOT_CONTEXT, work);
}

/** `trace_id` and `span_id` of the active span, for a log line (logger.ts); undefined when none is active or tracing is off. */
export function traceLogFields(): { trace_id: string; span_id: string } | undefined {
  if (!tracingOn) return undefined;
  const active = trace.getSpanContext(context.active());
  if (active === undefined || !isSpanContextValid(active)) return undefined;
  return { trace_id: active.traceId, span_id: active.spanId };
}
