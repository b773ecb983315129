import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Clock } from '@platform/kit/clock';
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

/** An upstream answer whose headers have arrived; the body is still coming. */
export interface UpstreamExchange {
  response: IncomingMessage;
  /** Records progress (a chunk arrived), pushing the timeout back. */
  touch(): void;
  /** Stops the timeout and drops the connection (the answer is no longer wanted). */
  abort(): void;
  /** Stops the timeout once the body has been read. */
  finish(): void;
  /** True once the timeout ended the exchange (the socket error that follows says only "aborted"). */
  timedOut(): boolean;
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
 * Calls the OpenAI-compatible upstream over node:http with a keep-alive agent: on these 2-core machines it carries
 * about three times what fetch does (see ARCHITECTURE.md), and the answer streams as it arrives. One timeout covers
 * the whole exchange: no headers, body byte or stream chunk for `timeoutMs` ends it.
 */
export class UpstreamClient {
  readonly #base: URL;
  readonly #transport: typeof http | typeof https;
  readonly #agent: http.Agent;
  readonly #clock: Clock;
  readonly timeoutMs: number;
  readonly #maxResponseBytes: number;

  constructor(args: { baseUrl: string; maxSockets: number; timeoutMs: number; maxResponseBytes: number; clock: Clock }) {
    this.#base = new URL(args.baseUrl.replace(/\/+$/, ''));
    this.#transport = this.#base.protocol === 'https:' ? https : http;
    this.#agent = new this.#transport.Agent({ keepAlive: true, maxSockets: args.maxSockets, keepAliveMsecs: 30_000 });
    this.#clock = args.clock;
    this.timeoutMs = args.timeoutMs;
    this.#maxResponseBytes = args.maxResponseBytes;
  }

  /** POSTs `body` and resolves once the answer's headers arrive; rejects with a 502/504 GatewayError. */
  open(path: UpstreamPath, body: Buffer, apiKey: string): Promise<UpstreamExchange> {
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'application/json',
      'content-length': body.length,
      accept: 'application/json, text/event-stream',
    };
    if (apiKey !== '') headers.authorization = `Bearer ${apiKey}`;
    return new Promise<UpstreamExchange>((resolve, reject) => {
      let timedOut = false;
      const request = this.#transport.request(
        {
          protocol: this.#base.protocol,
          hostname: this.#base.hostname,
          port: this.#base.port,
          path: `${this.#base.pathname}${path}`,
          method: 'POST',
          agent: this.#agent,
          headers,
        },
        (response) => {
          watchdog.touch();
          resolve({
            response,
            touch: () => watchdog.touch(),
            abort: () => {
              watchdog.stop();
              request.destroy();
            },
            finish: () => watchdog.stop(),
            timedOut: () => timedOut,
          });
        },
      );
      const watchdog = new Watchdog(this.#clock, this.timeoutMs, () => {
        timedOut = true;
        request.destroy(new UpstreamTimeout(this.timeoutMs));
      });
      request.on('error', (error) => {
        watchdog.stop();
        reject(upstreamFailure(error, this.timeoutMs));
      });
      request.end(body);
    });
  }

  /** The whole answer, for non-streaming calls; bounded by GATEWAY_MAX_RESPONSE_BYTES. */
  async call(path: UpstreamPath, body: Buffer, apiKey: string): Promise<CollectedAnswer> {
    return this.collect(await this.open(path, body, apiKey));
  }

  /** Reads the rest of an opened answer (an error answer of a stream request, say). */
  collect(exchange: UpstreamExchange): Promise<CollectedAnswer> {
    const { response } = exchange;
    return new Promise<CollectedAnswer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        exchange.touch();
        size += chunk.length;
        if (size <= this.#maxResponseBytes) chunks.push(chunk);
        else {
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
      });
      response.on('end', () => {
        exchange.finish();
        resolve({ status: response.statusCode ?? 502, contentType: response.headers['content-type'] ?? 'application/json', body: Buffer.concat(chunks, size) });
      });
      response.on('error', (error) => {
        exchange.finish();
        reject(upstreamFailure(exchange.timedOut() ? new UpstreamTimeout(this.timeoutMs) : error, this.timeoutMs));
      });
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
