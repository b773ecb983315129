import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * The trace context across an MCP call over stdio, which has no HTTP headers to carry it: the daemon puts the tool
 * call's `traceparent` (and `tracestate`) in the call's `params._meta` (tracing.ts `traceCarrier`), and a stdio
 * server that calls a service over HTTP for it (the connector's proxy) sends them on as headers, so the service's
 * span is a child of the daemon's tool call. The proxy itself records no span: it only passes the context on.
 */

const traceparentFormat = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
// W3C's limit; printable ASCII only, so it can never break a header.
const tracestateFormat = /^[\x20-\x7e]{1,512}$/;

/** The well-formed `traceparent` and `tracestate` of an MCP call's `_meta`; anything else is dropped, never sent as a header. */
export function traceHeadersOf(meta: unknown): Record<string, string> | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string' || !traceparentFormat.test(traceparent)) return undefined;
  return { traceparent, ...(typeof tracestate === 'string' && tracestateFormat.test(tracestate) ? { tracestate } : {}) };
}

/**
 * A `fetch` that adds the trace headers of the call `run` is running (each call its own, however many overlap), for
 * a client built once and used by every call.
 *
 * @example const relay = relayedTraceHeaders(); const client = new ConnectorClient({ ..., fetch: relay.fetch }); relay.run(request.params._meta, () => call(client))
 */
export function relayedTraceHeaders() {
  const current = new AsyncLocalStorage<Record<string, string>>();
  return {
    fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
      const carried = current.getStore();
      if (carried === undefined) return fetch(input, init);
      const headers = new Headers(init?.headers);
      for (const [name, value] of Object.entries(carried)) headers.set(name, value);
      return fetch(input, { ...init, headers });
    },
    run<T>(meta: unknown, work: () => T): T {
      const carried = traceHeadersOf(meta);
      return carried === undefined ? work() : current.run(carried, work);
    },
  };
}
