import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { startClientSpan } from '../observability/tracing.ts';

type AnswerHeaders = Record<string, string | string[] | undefined>;

export interface JsonAnswer {
  status: number;
  headers: AnswerHeaders;
  /** The parsed body; undefined when it was empty or not JSON (`text` has it then). */
  json: unknown;
  text: string;
}

export class JsonClientError extends Error {
  /** `timeout` when no answer came in time, `network` when the connection failed. */
  readonly kind: 'timeout' | 'network';
  constructor(kind: 'timeout' | 'network', message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'JsonClientError';
    this.kind = kind;
  }
}

export interface JsonClientOptions {
  /** Sockets kept open per host: one per request in flight is the most any call waits for. */
  maxSockets: number;
  /** Per request, from sending to the end of the answer. */
  timeoutMs: number;
  /** The largest answer read; a longer one fails the request (a service never answers with megabytes). */
  maxAnswerBytes?: number;
  /** Name resolution for new connections (e.g. one that refuses private addresses); the system's by default. */
  lookup?: LookupFunction;
}

/**
 * JSON over HTTP(S) with kept-alive connections, for service-to-service calls on a hot path. It sends through
 * undici's dispatcher rather than node:http's client: measured on our 2-core machines at about half the CPU per
 * request of a node:http keep-alive agent (itself about 3× `fetch`'s requests per second; see ARCHITECTURE.md),
 * which is most of what a paid marketplace call spends beside its crypto. With tracing on, each request is a client
 * span of the service making it and carries its `traceparent`.
 *
 * @example const client = createJsonClient({ maxSockets: 256, timeoutMs: 10_000 }); await client.request('POST', url, { body })
 */
export function createJsonClient(options: JsonClientOptions) {
  const agent = new Agent({ connections: options.maxSockets, ...(options.lookup ? { connect: { lookup: options.lookup } } : {}) });
  const maxBytes = options.maxAnswerBytes ?? 8 * 1024 * 1024;

  function request(
    method: string,
    url: string | URL,
    init: {
      headers?: Record<string, string>;
      body?: unknown;
      timeoutMs?: number /** The body already serialised (it was signed as these bytes). */;
      bodyText?: string;
    } = {},
  ): Promise<JsonAnswer> {
    const target = typeof url === 'string' ? new URL(url) : url;
    const text = init.bodyText ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (text !== undefined) headers['content-type'] = 'application/json';
    const timeoutMs = init.timeoutMs ?? options.timeoutMs;
    const span = startClientSpan(method, target, headers);
    return new Promise<JsonAnswer>((resolve, reject) => {
      // Settles once: a timeout, an oversized answer and a socket error can each arrive after another.
      let settled = false;
      let started: Dispatcher.DispatchController | undefined;
      let status = 0;
      let answerHeaders: AnswerHeaders = {};
      const chunks: Buffer[] = [];
      let size = 0;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        span.end(undefined, error);
        reject(error instanceof JsonClientError ? error : new JsonClientError('network', `${method} ${target.origin}: ${(error as Error).message}`, error));
      };
      const timer = setTimeout(() => {
        const error = new JsonClientError('timeout', `${method} ${target.origin}${target.pathname} did not answer within ${timeoutMs} ms`);
        fail(error);
        // A request still waiting for a connection is dropped when it gets one (onRequestStart below).
        started?.abort(error);
      }, timeoutMs);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(controller) {
          started = controller;
          if (settled) controller.abort(new JsonClientError('timeout', 'the request was given up before it was sent'));
        },
        onResponseStart(_controller, statusCode, responseHeaders) {
          status = statusCode;
          answerHeaders = responseHeaders;
        },
        onResponseData(controller, chunk) {
          if (settled) return;
          size += chunk.length;
          if (size > maxBytes) {
            const error = new JsonClientError('network', `the answer from ${target.origin} is larger than ${maxBytes} bytes`);
            fail(error);
            // The connection is dropped, not reused: the rest of the answer is never read.
            controller.abort(error);
            return;
          }
          chunks.push(chunk);
        },
        onResponseEnd() {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const body = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = body === '' ? undefined : JSON.parse(body);
          } catch {
            json = undefined;
          }
          span.end(status);
          resolve({ status, headers: answerHeaders, json, text: body });
        },
        onResponseError(_controller, error) {
          fail(error);
        },
      };
      agent.dispatch(
        { origin: target.origin, path: `${target.pathname}${target.search}`, method: method as Dispatcher.HttpMethod, headers, body: text ?? null },
        handler,
      );
    });
  }

  return {
    request,
    /** Closes the kept-alive connections (requests in flight fail). */
    close(): Promise<void> {
      return agent.destroy();
    },
  };
}

export type JsonClient = ReturnType<typeof createJsonClient>;
