import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { startClientSpan } from '@platform/kit/observability/tracing';
import type { Dispatcher } from 'undici';
import type { ProxyTiming } from '../metrics.ts';
import type { IdleSweep, IdleWatch } from './idle-sweep.ts';

/**
 * Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), and `expect`: the router's own server
 * has already answered a client's `100-continue` (Node's default), so the upstream is sent the body outright.
 */
const hopByHop = new Set([
  'connection',
  'expect',
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
  /** The keep-alive connections to the upstream (undici's Agent). */
  dispatcher: Dispatcher;
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

/** What of `from` may pass the hop: no header of one connection, none its `Connection` names, none in `owned`. */
function passable(from: IncomingHttpHeaders, owned?: ReadonlySet<string>): Record<string, string | string[]> {
  const named = connectionTokens(from);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(from))
    if (value !== undefined && !hopByHop.has(name) && !owned?.has(name) && !named.has(name)) headers[name] = value;
  return headers;
}

function requestHeaders(request: IncomingMessage, target: ForwardTarget): Record<string, string | string[]> {
  const headers = passable(request.headers, routerOwned);
  headers['x-forwarded-for'] = request.socket.remoteAddress ?? '';
  headers['x-forwarded-proto'] = 'encrypted' in request.socket ? 'https' : 'http';
  if (request.headers.host) headers['x-forwarded-host'] = request.headers.host;
  return { ...headers, ...target.headers };
}

function responseHeaders(upstream: IncomingHttpHeaders, added: Record<string, string>): OutgoingHttpHeaders {
  return { ...passable(upstream), ...added };
}

/** A body arrives with a length or chunked (RFC 9112 §6.3); a request naming neither has none. */
function hasBody(request: IncomingMessage): boolean {
  return request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
}

/**
 * The client's body as undici reads it, touching the watch on every chunk. Not the stream itself: undici destroys a
 * stream body when the exchange ends or fails, and destroying a request not yet read to its end destroys the client's
 * socket, where the router still has a clean 503 to write. The iterator leaves the stream alone when undici stops early.
 */
async function* bodyOf(request: IncomingMessage, watchdog: IdleWatch): AsyncGenerator<Buffer> {
  for await (const chunk of request.iterator({ destroyOnReturn: false })) {
    watchdog.touch();
    yield chunk as Buffer;
  }
}

/**
 * Streams a request to the upstream and its answer back, both ways without buffering (bodies and SSE flow as they
 * arrive, the client's pace holding the upstream's back). Headers go to the client only once the upstream has
 * answered, so a failure before that can still be a clean error. A client that leaves ends the upstream request; an
 * upstream that fails after answering cuts the client. With tracing on it is a client span of the router's request,
 * and the upstream gets that span's `traceparent` in place of the client's (the router's span sits between them).
 *
 * The upstream is called through undici's dispatcher (the handler interface, no stream objects of its own between
 * the sockets): in the router's bench its client cost half of node:http's CPU a request.
 */
export function forward(request: IncomingMessage, response: ServerResponse, target: ForwardTarget, options: ForwardOptions): void {
  let ended = false;
  let status: number | undefined;
  let controller: Dispatcher.DispatchController | undefined;
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
  const origin = `http://${host}:${target.port}`;
  const span = startClientSpan(method, `${origin}${target.path}`, headers);
  const sentAt = performance.now();
  const watchdog = options.idle.watch(() => controller?.abort(new Error(`no byte for ${options.idle.timeoutMs} ms (ROUTER_PROXY_TIMEOUT)`)));
  const failedBeforeAnswer = (error: Error) => {
    if (!response.headersSent) {
      // A client that left first ended this exchange: not the upstream's failure.
      if (!response.destroyed) {
        options.timing?.failed();
        options.onFailureBeforeAnswer(error);
      }
    } else response.destroy();
    end(error);
  };
  response.on('close', () => {
    if (response.writableFinished) return end();
    // The client left before the end: nobody will read the rest, so the upstream need not write it.
    const left = new Error('the client left before the answer ended');
    controller?.abort(left);
    end(left);
  });
  // undici takes an async iterable as a body (core/request.js), which its types do not say.
  const body = (hasBody(request) ? bodyOf(request, watchdog) : null) as Dispatcher.DispatchOptions['body'];
  options.dispatcher.dispatch(
    { origin, path: target.path, method, headers, body },
    {
      onRequestStart(started) {
        controller = started;
        // The client left while the request waited for a connection.
        if (ended) started.abort(new Error('the client left before the answer ended'));
      },
      onResponseStart(_controller, statusCode, upstreamHeaders) {
        options.timing?.answered((performance.now() - sentAt) / 1000);
        status = statusCode;
        watchdog.touch();
        response.writeHead(statusCode, responseHeaders(upstreamHeaders, options.responseHeaders));
        // A streamed answer (server-sent events, a chunked body: no Content-Length) gets its headers to the client at
        // once, and its chunks as they come. A whole body's headers leave with its first bytes, in one write: flushed
        // apart, they cost a second write and a second wake of the client for every request (on loopback a socket
        // write is the largest single cost of a proxied request in the router's profile).
        if (upstreamHeaders['content-length'] === undefined) response.flushHeaders();
      },
      onResponseData(paused, chunk) {
        watchdog.touch();
        if (!response.write(chunk)) {
          paused.pause();
          response.once('drain', () => paused.resume());
        }
      },
      onResponseEnd() {
        response.end();
      },
      onResponseError(_controller, error) {
        failedBeforeAnswer(error);
      },
    },
  );
}
