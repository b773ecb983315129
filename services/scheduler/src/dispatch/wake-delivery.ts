import { type ServiceTracing, SpanKind, SpanStatusCode, startClientSpan } from '@platform/kit/observability/tracing';
import { type Dispatcher, Pool } from 'undici';
import type { FireResult, WakeFailureReason } from '../alarms/fire-outcome.ts';

/** The body POSTed to the wake receiver. */
export interface WakeBody {
  user_id: string;
  /** The DID that created the alarm: the daemon refuses a wake that is not for its own (a second check beside user_id). */
  did: string;
  alarm_id: string;
  label: string;
  wake_message: string;
  conversation_id: string;
  payload: Record<string, unknown>;
  scheduled_for: string;
  fired_at: string;
  attempt: number;
}

export type DeliverWake = (wake: WakeBody) => Promise<FireResult>;

export interface WakePosterOptions {
  url: string;
  /** Sent as `Authorization: Bearer …`; no header when empty. */
  token: string;
  /** From sending to the end of the answer (and including any wait for a connection). */
  timeoutMs: number;
  /** Kept-alive connections to the receiver: one per wake in flight, so no wake waits for a connection. */
  connections?: number;
  /** Wakes sent on one connection before the first answer comes back (HTTP/1.1 pipelining); 1 (off) by default. */
  pipelining?: number;
  /** The scheduler's tracing: each fire starts a trace (the router's wake and the daemon's turn join it); absent or off, nothing is added. */
  tracing?: ServiceTracing;
}

export interface WakePoster {
  /** POSTs one serialised wake body. Never rejects: a failure is `{ok: false, error}`. */
  post(body: string, idempotencyKey: string): Promise<FireResult>;
  /** Closes the kept-alive connections (wakes in flight fail). */
  close(): Promise<void>;
}

/**
 * POSTs wakes over undici's Pool: kept-alive connections to the one receiver, no per-request URL, agent or
 * header-object work. On our 2-core machines it costs about half the CPU per request of a node:http keep-alive
 * agent, which in turn closed every free socket past its default 256 after each burst and reconnected them for
 * the next one. Pipelining stays off: one hanging wake would hold up the wakes queued behind it on its connection.
 */
export function createWakePoster(options: WakePosterOptions): WakePoster {
  const target = new URL(options.url);
  const path = `${target.pathname}${target.search}`;
  // Our own per-wake timer covers the whole exchange, so undici's own header and body timers are off.
  const pool = new Pool(target.origin, { connections: options.connections ?? 128, pipelining: options.pipelining ?? 1, headersTimeout: 0, bodyTimeout: 0 });
  const bearer = options.token === '' ? undefined : `Bearer ${options.token}`;
  const timedOut = `wake receiver did not answer within ${options.timeoutMs} ms`;
  const traced = options.tracing?.enabled === true;
  return {
    post(body, idempotencyKey) {
      // Flat header lists: undici copies them as they are, with no object to build or walk per wake.
      const headers =
        bearer === undefined
          ? ['content-type', 'application/json', 'idempotency-key', idempotencyKey]
          : ['content-type', 'application/json', 'idempotency-key', idempotencyKey, 'authorization', bearer];
      if (!traced)
        return new Promise<FireResult>((resolve) => {
          pool.dispatch({ path, method: 'POST', headers, body, idempotent: true }, new WakeExchange(resolve, options.timeoutMs, timedOut));
        });
      const carrier: Record<string, string> = {};
      const span = startClientSpan('POST', target, carrier);
      for (const [name, value] of Object.entries(carrier)) headers.push(name, value);
      return new Promise<FireResult>((resolve) => {
        const settle = (result: FireResult, status: number) => {
          span.end(status === 0 ? undefined : status, result.ok || status !== 0 ? undefined : new Error(result.error));
          resolve(result);
        };
        pool.dispatch({ path, method: 'POST', headers, body, idempotent: true }, new WakeExchange(settle, options.timeoutMs, timedOut));
      });
    },
    close: () => pool.destroy(),
  };
}

/** Delivers wakes over HTTP: 2xx is success; any other status, no full answer in time or a failed connection is a failed fire. */
export function httpWakeDelivery(options: WakePosterOptions): DeliverWake {
  const poster = createWakePoster(options);
  // The key is the same for every attempt of one occurrence, so a receiver can drop repeats.
  const deliver: DeliverWake = (wake) => poster.post(JSON.stringify(wake), `${wake.alarm_id}:${wake.scheduled_for}`);
  const tracing = options.tracing;
  if (tracing === undefined || !tracing.enabled) return deliver;
  // A fire begins a trace of its own: the request that made the alarm ended long ago.
  return (wake) =>
    tracing.span(
      'alarm fire',
      { root: true, kind: SpanKind.PRODUCER, attributes: { 'platform.alarm.id': wake.alarm_id, 'platform.alarm.attempt': wake.attempt } },
      async (span) => {
        const result = await deliver(wake);
        if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
        return result;
      },
    );
}

const ok: FireResult = Object.freeze({ ok: true });

function statusReason(status: number): WakeFailureReason {
  if (status >= 400 && status < 500) return 'http_4xx';
  return status >= 500 && status < 600 ? 'http_5xx' : 'http_other';
}

function expire(exchange: WakeExchange): void {
  exchange.timeout();
}

/** One wake's exchange: settles once, whichever of the answer, an error or the timeout comes first. */
class WakeExchange implements Dispatcher.DispatchHandler {
  /** With the answer's status, 0 when none came. */
  readonly #resolve: (result: FireResult, status: number) => void;
  readonly #timer: NodeJS.Timeout;
  readonly #timedOut: string;
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #settled = false;

  constructor(resolve: (result: FireResult, status: number) => void, timeoutMs: number, timedOut: string) {
    this.#resolve = resolve;
    this.#timedOut = timedOut;
    this.#timer = setTimeout(expire, timeoutMs, this);
  }

  timeout(): void {
    if (this.#settle({ ok: false, error: this.#timedOut, reason: 'timeout' })) this.#controller?.abort(new Error(this.#timedOut));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Timed out while waiting for a connection: drop it rather than send a wake already counted as failed.
    if (this.#settled) controller.abort(new Error(this.#timedOut));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.#status = statusCode;
  }

  onResponseData(): void {
    // The answer's body carries nothing the dispatcher needs; undici reads it off the connection regardless.
  }

  onResponseEnd(): void {
    const status = this.#status;
    this.#settle(status >= 200 && status < 300 ? ok : { ok: false, error: `wake receiver answered HTTP ${status}`, reason: statusReason(status) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#settle({ ok: false, error: `wake receiver unreachable: ${(error as NodeJS.ErrnoException).code ?? error.message}`, reason: 'unreachable' });
  }

  #settle(result: FireResult): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#resolve(result, this.#status);
    return true;
  }
}
