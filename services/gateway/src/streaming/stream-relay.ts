import type { ServerResponse } from 'node:http';
import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { Reservation, Usage } from '../metering/meter.ts';
import { type UpstreamExchange, UpstreamTimeout } from '../upstream/upstream-client.ts';
import type { DrainSlots } from './drain-slots.ts';
import { SseEventSplitter } from './sse-events.ts';

export interface StreamRelayArgs {
  exchange: UpstreamExchange;
  /** The hijacked response: the relay writes it directly so each event leaves as soon as it is complete. */
  client: ServerResponse;
  /** Undefined for BYO calls, which are not metered. */
  reservation: Reservation | undefined;
  /** The gateway asked for usage the client did not: withhold the usage-only chunk so the client sees its own stream. */
  hideUsageChunk: boolean;
  drains: DrainSlots;
  clock: Clock;
  drainTimeoutMs: number;
  logger: Logger;
}

/** How a stream is booked when it ends: its usage (else its reservation), or not at all. */
type Booking = 'usage_or_reservation' | 'release';

/** How a stream ended. */
export type StreamOutcome =
  | 'completed'
  | 'ended_without_done'
  /** The upstream's answer ended on its own error event, with no usage: nothing charged. */
  | 'upstream_error_event'
  | 'upstream_failed'
  | 'client_left'
  | 'client_left_no_drain_slot'
  | 'drained'
  | 'drain_stopped'
  | 'drain_timed_out'
  | 'drain_failed';

/** What the relay reports once the call is booked: its outcome, and what went wrong upstream if anything did. */
export interface StreamEnd {
  outcome: StreamOutcome;
  /** The answer broke off or stalled (`unreachable`, `timeout`), or carried an error event (`stream_error`). */
  upstreamFailure: 'timeout' | 'unreachable' | 'stream_error' | undefined;
  /** Whether the upstream's answer ran to its end (whole, or on its error event) rather than failing or being cut. */
  upstreamEnded: boolean;
  /** The usage the upstream reported, if any (for the call's span). */
  usage: Usage | undefined;
}

// The drain timer's abort reason; without one, abort() builds a DOMException with a stack for every stream.
const streamEnded = Symbol('stream ended');

/** An event longer than this never completing means a broken upstream, not a slow one. */
const maxPendingChars = 4 * 1024 * 1024;

/**
 * Pipes an upstream SSE answer to the client event by event as it arrives, and books it from the trailing usage:
 *
 * - `data: [DONE]`: debit the reported usage (no usage reported: charge the reservation, the gateway never
 *   estimates), then forward [DONE] and end; a client that has seen [DONE] is already debited.
 * - the upstream ends with an error event, fails or stalls while the client listens: the client gets the error event
 *   (the gateway's own, OpenAI-shaped, for a failure or stall) and the reservation is released.
 * - the client leaves mid-stream: keep reading the upstream, without forwarding, for up to GATEWAY_DRAIN_TIMEOUT_MS
 *   and at most GATEWAY_MAX_DRAINS at once, to learn the usage and debit it; no usage by then, no free drain slot, or
 *   the upstream failing: charge the reservation. Leaving early never makes an answer free.
 *
 * Resolves once the call is booked and the client's response has ended, with how it ended and the usage reported.
 */
export function relayStream(args: StreamRelayArgs): Promise<StreamEnd> {
  return new Promise<StreamEnd>((resolve) => new StreamRelay(args, resolve).start());
}

class StreamRelay {
  readonly #args: StreamRelayArgs;
  readonly #resolve: (end: StreamEnd) => void;
  readonly #splitter = new SseEventSplitter();
  readonly #stopDrainTimer = new AbortController();
  #state: 'relaying' | 'draining' | 'done' = 'relaying';
  #usage: Usage | undefined;
  #upstreamError = false;
  #upstreamEnded = false;
  #upstreamFailure: 'timeout' | 'unreachable' | undefined;
  /** The [DONE] event, held back until the call is booked. */
  #doneEvent: string | undefined;
  #giveDrainSlot: (() => void) | undefined;

  constructor(args: StreamRelayArgs, resolve: (end: StreamEnd) => void) {
    this.#args = args;
    this.#resolve = resolve;
  }

  start(): void {
    const { exchange, client } = this.#args;
    client.writeHead(200, {
      'content-type': exchange.contentType ?? 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    client.flushHeaders();
    exchange.read({ data: (chunk) => this.#onChunk(chunk), end: () => this.#onUpstreamEnd(), error: (error) => this.#onUpstreamFailure(error) });
    client.on('drain', () => exchange.resume());
    client.on('close', () => {
      if (!client.writableFinished) this.#onClientGone();
    });
    if (client.destroyed) this.#onClientGone();
  }

  #onChunk(chunk: Buffer): void {
    const { exchange, client, hideUsageChunk } = this.#args;
    if (this.#state === 'done') return;
    let forward = '';
    for (const event of this.#splitter.push(chunk)) {
      if (event.usage) this.#usage = event.usage;
      if (event.error) this.#upstreamError = true;
      if (event.done) this.#doneEvent = event.raw;
      else if (!(hideUsageChunk && event.usageOnly)) forward += event.raw;
    }
    if (this.#state === 'relaying' && forward !== '' && !client.write(forward)) exchange.pause();
    if (this.#doneEvent !== undefined) void this.#end('usage_or_reservation', this.#state === 'relaying' ? 'completed' : 'drained');
    else if (this.#state === 'draining' && this.#usage) void this.#end('usage_or_reservation', 'drained');
    else if (this.#splitter.pendingChars > maxPendingChars) exchange.abort(new Error('upstream event larger than 4 MiB'));
  }

  #onUpstreamEnd(): void {
    this.#upstreamEnded = true;
    if (this.#state === 'done') return;
    if (this.#state === 'relaying') {
      const rest = this.#splitter.rest();
      if (rest !== '') this.#args.client.write(rest);
    }
    // An answer that ended on an error event served nothing worth charging; any other end is charged.
    if (this.#state === 'relaying' && this.#upstreamError && !this.#usage) void this.#end('release', 'upstream_error_event');
    else void this.#end('usage_or_reservation', this.#state === 'draining' ? 'drained' : 'ended_without_done');
  }

  #onUpstreamFailure(error: Error): void {
    this.#upstreamEnded = true;
    if (this.#state === 'done') return;
    const timedOut = error instanceof UpstreamTimeout;
    this.#upstreamFailure = timedOut ? 'timeout' : 'unreachable';
    if (this.#state === 'draining') {
      void this.#end('usage_or_reservation', 'drain_failed');
      return;
    }
    const failure = {
      error: {
        message: timedOut
          ? 'the upstream stopped sending mid-stream; the answer is incomplete and nothing was charged'
          : 'the upstream broke off the stream; the answer is incomplete and nothing was charged',
        type: 'upstream_error',
        code: timedOut ? 'upstream_timeout' : 'upstream_unreachable',
        param: null,
      },
    };
    this.#args.client.write(`data: ${JSON.stringify(failure)}\n\n`);
    void this.#end('release', 'upstream_failed');
  }

  #onClientGone(): void {
    if (this.#state !== 'relaying') return;
    const { reservation, drains, exchange, clock, drainTimeoutMs } = this.#args;
    // Nothing to learn for an unmetered call, and a known usage needs no more reading.
    if (!reservation || this.#usage) {
      void this.#end('usage_or_reservation', 'client_left');
      return;
    }
    const slot = drains.take();
    if (!slot) {
      void this.#end('usage_or_reservation', 'client_left_no_drain_slot');
      return;
    }
    this.#state = 'draining';
    this.#giveDrainSlot = slot.give;
    exchange.resume();
    slot.signal.addEventListener('abort', () => void this.#end('usage_or_reservation', 'drain_stopped'), { once: true });
    void clock.sleep(drainTimeoutMs, this.#stopDrainTimer.signal).then(() => {
      if (this.#state === 'draining') void this.#end('usage_or_reservation', 'drain_timed_out');
    });
  }

  async #end(booking: Booking, outcome: StreamOutcome): Promise<void> {
    if (this.#state === 'done') return;
    const wasRelaying = this.#state === 'relaying';
    this.#state = 'done';
    this.#stopDrainTimer.abort(streamEnded);
    const { exchange, client, reservation, logger } = this.#args;
    // After [DONE] the upstream ends by itself (and its socket goes back to the pool); otherwise it is cut.
    const upstreamEnded = (this.#upstreamEnded && this.#upstreamFailure === undefined) || this.#doneEvent !== undefined;
    if (!this.#upstreamEnded && this.#doneEvent === undefined) exchange.abort();
    try {
      if (reservation) {
        if (booking === 'release') reservation.release();
        else if (this.#usage) await reservation.settle(this.#usage);
        else {
          await reservation.chargeReservation();
          logger.warn({ outcome }, 'stream booked at its reservation: no usage was reported');
        }
      }
    } catch (error) {
      logger.error({ err: error, outcome }, 'could not book a stream');
    } finally {
      this.#giveDrainSlot?.();
      if (wasRelaying && !client.destroyed) client.end(this.#doneEvent);
      logger.debug({ outcome, usage: this.#usage }, 'stream ended');
      this.#resolve({
        outcome,
        upstreamFailure: this.#upstreamFailure ?? (this.#upstreamError ? 'stream_error' : undefined),
        upstreamEnded,
        usage: this.#usage,
      });
    }
  }
}
