import type { Agent, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { startClientSpan } from '@platform/kit/observability/tracing';
import type { ProxyTiming } from '../metrics.ts';
import type { IdleSweep } from './idle-sweep.ts';

// node:http through require: an ES import builds the module's whole namespace, which loads undici (see ARCHITECTURE.md).
const require = createRequire(import.meta.url);
const http = require('node:http') as typeof import('node:http');

/** Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), plus the client's own credentials. */
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
]);
/** Set by the router only: a client cannot claim to be someone, or somewhere, else. */
const routerOwned = new Set(['host', 'authorization', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'forwarded', 'x-platform-user-id']);

/** An upstream's base URL as `http.request` takes it. */
export interface Upstream {
  hostname: string;
  port: number;
  /** The URL's path without a trailing slash, to put in front of the forwarded path. */
  basePath: string;
}

/**
 * Where a base URL points, for `http.request`. A URL keeps an IPv6 host in brackets (`http://[fdaa::3]:8080` has
 * hostname `[fdaa::3]`), which `http.request` would look up as a name and never find: every Fly machine's private
 * address is IPv6, so the brackets go.
 */
export function upstreamAt(base: string): Upstream {
  const url = new URL(base);
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { hostname, port: Number(url.port || 80), basePath: url.pathname.replace(/\/$/, '') };
}

export interface ForwardTarget {
  hostname: string;
  port: number;
  /** Path and query as the upstream sees them. */
  path: string;
  /** Added to (and overriding) the client's headers: the upstream's bearer, the user's id. */
  headers: Record<string, string>;
}

export interface ForwardOptions {
  agent: Agent;
  /** No byte either way for its timeout ends the exchange (SSE heartbeats keep a quiet stream alive). */
  idle: IdleSweep;
  /** Added to the response: CORS, the cold-start header. */
  responseHeaders: Record<string, string>;
  /** The upstream failed before answering: the caller writes a clean error (the response is still untouched). */
  onFailureBeforeAnswer: (error: Error) => void;
  /** Called once when the exchange is over, however it ended. */
  onEnd: () => void;
  /** The target's latency to its answer's headers, or its failure before them (router_proxy_duration_seconds). */
  timing?: ProxyTiming;
}

// Most requests and answers name no header in `Connection` beyond keep-alive: no set to build for them.
const noTokens: ReadonlySet<string> = new Set();

function connectionTokens(headers: IncomingHttpHeaders): ReadonlySet<string> {
  const value = headers.connection;
  if (value === undefined || value === 'keep-alive' || value === 'close') return noTokens;
  return new Set((Array.isArray(value) ? value.join(',') : (value ?? '')).split(',').map((token) => token.trim().toLowerCase()));
}

function requestHeaders(request: IncomingMessage, target: ForwardTarget): OutgoingHttpHeaders {
  const named = connectionTokens(request.headers);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined && !hopByHop.has(name) && !routerOwned.has(name) && !named.has(name)) headers[name] = value;
  headers['x-forwarded-for'] = request.socket.remoteAddress ?? '';
  headers['x-forwarded-proto'] = 'encrypted' in request.socket ? 'https' : 'http';
  if (request.headers.host) headers['x-forwarded-host'] = request.headers.host;
  return { ...headers, ...target.headers };
}

function responseHeaders(upstream: IncomingMessage, added: Record<string, string>): OutgoingHttpHeaders {
  const named = connectionTokens(upstream.headers);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream.headers)) if (value !== undefined && !hopByHop.has(name) && !named.has(name)) headers[name] = value;
  return { ...headers, ...added };
}

/**
 * Streams a request to the upstream and its answer back, both ways without buffering (bodies and SSE flow as they
 * arrive). Headers go to the client only once the upstream has answered, so a failure before that can still be a
 * clean error. A client that leaves ends the upstream request; an upstream that fails after answering cuts the client.
 * With tracing on it is a client span of the router's request, and the upstream gets that span's `traceparent` in
 * place of the client's (the router's span sits between them).
 */
export function forward(request: IncomingMessage, response: ServerResponse, target: ForwardTarget, options: ForwardOptions): void {
  let ended = false;
  let status: number | undefined;
  const end = (error?: Error) => {
    if (ended) return;
    ended = true;
    watchdog.stop();
    span.end(status, error);
    options.onEnd();
  };
  const method = request.method ?? 'GET';
  const headers = requestHeaders(request, target);
  const host = target.hostname.includes(':') ? `[${target.hostname}]` : target.hostname;
  const span = startClientSpan(method, `http://${host}:${target.port}${target.path}`, headers);
  const sentAt = performance.now();
  const upstream = http.request({ hostname: target.hostname, port: target.port, method, path: target.path, headers, agent: options.agent });
  const watchdog = options.idle.watch(() => upstream.destroy(new Error(`no byte for ${options.idle.timeoutMs} ms (ROUTER_PROXY_TIMEOUT)`)));
  request.on('data', watchdog.touch);
  upstream.on('response', (answer) => {
    options.timing?.answered((performance.now() - sentAt) / 1000);
    status = answer.statusCode;
    watchdog.touch();
    answer.on('data', watchdog.touch);
    response.writeHead(answer.statusCode ?? 502, responseHeaders(answer, options.responseHeaders));
    // A streamed answer (server-sent events, a chunked body: no Content-Length) gets its headers to the client at
    // once, and its chunks as they come. A whole body's headers leave with its first bytes, in one write: flushed
    // apart, they cost a second write and a second wake of the client for every request (on loopback a socket write
    // is the largest single cost of a proxied request in the router's profile).
    if (answer.headers['content-length'] === undefined) response.flushHeaders();
    answer.pipe(response);
    answer.on('error', () => response.destroy());
    answer.on('end', () => end());
  });
  upstream.on('error', (error) => {
    if (!response.headersSent) {
      // A client that left first destroyed this request: not the upstream's failure.
      if (!response.destroyed) options.timing?.failed();
      options.onFailureBeforeAnswer(error);
    } else response.destroy();
    end(error);
  });
  response.on('close', () => {
    // The client left before the end: nobody will read the rest, so the daemon need not write it.
    if (!response.writableFinished) upstream.destroy();
    end(response.writableFinished ? undefined : new Error('the client left before the answer ended'));
  });
  request.pipe(upstream);
}
