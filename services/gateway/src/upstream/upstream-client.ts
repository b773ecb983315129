import type { Clock } from '@platform/kit/clock';
import { continueClientSpan } from '@platform/kit/observability/tracing';
import { type Dispatcher, Pool } from 'undici';
import { GatewayError } from '../http/openai-errors.ts';
import { Watchdog } from './watchdog.ts';

export type UpstreamPath = '/chat/completions' | '/embeddings';

/** Marks the error a request is destroyed with when the watchdog fires, to tell a timeout from a broken socket. */
export class UpstreamTimeout extends Error {
  constructor(timeoutMs: number) {
    super(`the upstream made no progress for ${timeoutMs} ms`);
    this.name = 'UpstreamTimeout';
  }
}

/** What an exchange tells its reader about the body. */
export interface BodyReader {
  data(chunk: Buffer): void;
  end(): void;
  error(error: Error): void;
}

/** An upstream answer whose headers have arrived; the body is still coming. */
export interface UpstreamExchange {
  status: number;
  /** As the upstream sent it; undefined when it sent none. */
  contentType: string | undefined;
  /** Starts delivering the body to `reader` (chunks that arrived with the headers first); exactly one of end/error ends it. */
  read(reader: BodyReader): void;
  /** Stops reading from the socket (the client is slow); `resume` goes on. */
  pause(): void;
  resume(): void;
  /** Drops the connection (the answer is no longer wanted); the reader gets `reason` as its error if it had not ended. */
  abort(reason?: Error): void;
}

export interface CollectedAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** The failure seen before or while reading an answer, as the 502 or 504 the caller gets. */
export function upstreamFailure(error: unknown, timeoutMs: number): GatewayError {
  if (error instanceof UpstreamTimeout)
    return new GatewayError(
      504,
      'upstream_error',
      'upstream_timeout',
      `the upstream did not answer within ${timeoutMs} ms (GATEWAY_UPSTREAM_TIMEOUT_MS); nothing was charged`,
    );
  if (error instanceof GatewayError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'connection error';
  return new GatewayError(
    502,
    'upstream_error',
    'upstream_unreachable',
    `the upstream could not be reached or broke off the answer (${code}); nothing was charged`,
    {
      cause: error,
    },
  );
}

/**
 * Calls the OpenAI-compatible upstream through undici's dispatcher with kept-alive connections (one pool for the
 * one origin): about half the client CPU per request of node:http's keep-alive agent (see ARCHITECTURE.md, the kit's
 * JSON client), and the answer streams as it arrives. One timeout covers the whole exchange: no headers, body byte
 * or stream chunk for `timeoutMs` ends it (undici's own header and body timers are off, so the injected clock rules).
 * With tracing on, each exchange is a client span, to the answer's last byte, and carries its `traceparent`.
 */
export class UpstreamClient {
  readonly #base: URL;
  readonly #pool: Pool;
  readonly #clock: Clock;
  readonly timeoutMs: number;
  readonly #maxResponseBytes: number;

  constructor(args: { baseUrl: string; maxSockets: number; timeoutMs: number; maxResponseBytes: number; clock: Clock }) {
    this.#base = new URL(args.baseUrl.replace(/\/+$/, ''));
    this.#pool = new Pool(this.#base.origin, { connections: args.maxSockets, headersTimeout: 0, bodyTimeout: 0 });
    this.#clock = args.clock;
    this.timeoutMs = args.timeoutMs;
    this.#maxResponseBytes = args.maxResponseBytes;
  }

  /** POSTs `body` and resolves once the answer's headers arrive; rejects with a 502/504 GatewayError. */
  open(path: UpstreamPath, body: Buffer, apiKey: string): Promise<UpstreamExchange> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    if (apiKey !== '') headers.authorization = `Bearer ${apiKey}`;
    const fullPath = `${this.#base.pathname === '/' ? '' : this.#base.pathname}${path}`;
    // The model call's span (gateway-calls.ts) is this request's client span: the upstream sees it as its parent.
    const span = continueClientSpan(this.#base, headers);
    return new Promise<UpstreamExchange>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let exchange: Exchange | undefined;
      let failedEarly: Error | undefined;
      // Once the headers are in, a failure (a timeout included, as UpstreamTimeout) goes to the exchange's reader.
      const fail = (error: Error) => {
        span.end(exchange?.status, error);
        watchdog.stop();
        if (exchange) exchange.finish(error);
        else if (!failedEarly) {
          failedEarly = error;
          reject(upstreamFailure(error, this.timeoutMs));
        }
      };
      const watchdog = new Watchdog(this.#clock, this.timeoutMs, () => {
        const timeout = new UpstreamTimeout(this.timeoutMs);
        fail(timeout);
        // A request still waiting for a connection is dropped when it gets one (onRequestStart below).
        controller?.abort(timeout);
      });
      this.#pool.dispatch(
        { path: fullPath, method: 'POST', headers, body },
        {
          onRequestStart(started) {
            controller = started;
            if (failedEarly) started.abort(failedEarly);
          },
          onResponseStart(started, statusCode, responseHeaders) {
            watchdog.touch();
            const contentType = responseHeaders['content-type'];
            exchange = new Exchange(started, watchdog, statusCode, typeof contentType === 'string' ? contentType : undefined);
            resolve(exchange);
          },
          onResponseData(_controller, chunk) {
            watchdog.touch();
            exchange?.push(chunk);
          },
          onResponseEnd() {
            span.end(exchange?.status);
            watchdog.stop();
            exchange?.finish();
          },
          onResponseError(_controller, error) {
            fail(error);
          },
        },
      );
    });
  }

  /** The whole answer, for non-streaming calls; bounded by GATEWAY_MAX_RESPONSE_BYTES. */
  async call(path: UpstreamPath, body: Buffer, apiKey: string): Promise<CollectedAnswer> {
    return this.collect(await this.open(path, body, apiKey));
  }

  /** Reads the rest of an opened answer (an error answer of a stream request, say). */
  collect(exchange: UpstreamExchange): Promise<CollectedAnswer> {
    return new Promise<CollectedAnswer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = false;
      exchange.read({
        data: (chunk) => {
          size += chunk.length;
          if (size <= this.#maxResponseBytes) chunks.push(chunk);
          else if (!tooLarge) {
            tooLarge = true;
            exchange.abort();
            reject(
              new GatewayError(
                502,
                'upstream_error',
                'upstream_response_too_large',
                'the upstream answer is larger than GATEWAY_MAX_RESPONSE_BYTES; nothing was charged',
              ),
            );
          }
        },
        end: () =>
          resolve({
            status: exchange.status,
            contentType: exchange.contentType ?? 'application/json',
            body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size),
          }),
        error: (error) => reject(upstreamFailure(error, this.timeoutMs)),
      });
    });
  }

  close(): void {
    void this.#pool.destroy();
  }
}

/** One answer being read: the chunks that come before a reader is attached wait for it; it ends once. */
class Exchange implements UpstreamExchange {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly #controller: Dispatcher.DispatchController;
  readonly #watchdog: Watchdog;
  #reader: BodyReader | undefined;
  #early: Buffer[] = [];
  #ending: { error?: Error } | undefined;
  #ended = false;

  constructor(controller: Dispatcher.DispatchController, watchdog: Watchdog, status: number, contentType: string | undefined) {
    this.#controller = controller;
    this.#watchdog = watchdog;
    this.status = status;
    this.contentType = contentType;
  }

  read(reader: BodyReader): void {
    this.#reader = reader;
    for (const chunk of this.#early.splice(0)) if (!this.#ended) reader.data(chunk);
    if (this.#ending) this.finish(this.#ending.error);
  }

  pause(): void {
    this.#controller.pause();
  }

  resume(): void {
    this.#controller.resume();
  }

  abort(reason: Error = new Error('the answer is no longer wanted')): void {
    this.#watchdog.stop();
    if (!this.#controller.aborted) this.#controller.abort(reason);
    this.finish(reason);
  }

  push(chunk: Buffer): void {
    if (this.#ended) return;
    if (this.#reader) this.#reader.data(chunk);
    else this.#early.push(chunk);
  }

  /** The answer ended, whole or with `error`; a reader not yet attached is told when it attaches. */
  finish(error?: Error): void {
    if (this.#ended) return;
    if (!this.#reader) {
      this.#ending ??= error ? { error } : {};
      return;
    }
    this.#ended = true;
    this.#watchdog.stop();
    if (error) this.#reader.error(error);
    else this.#reader.end();
  }
}
