import type { FastifyReply } from 'fastify';
import { validatedByHandler } from '../wire-schemas.ts';

/** Response headers of every server-sent-events stream. */
export const sseHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // nginx would otherwise buffer the stream and deliver events in bursts.
  'x-accel-buffering': 'no',
};

/** Sent once at the start: browsers wait this long (ms) before reconnecting with Last-Event-ID. */
export const ssePreamble = 'retry: 2000\n\n';
/** A comment line that keeps proxies from closing a quiet stream. */
export const sseHeartbeat = ': heartbeat\n\n';

/** Where a subscriber's SSE text goes. The route passes the raw HTTP response, which fits as it is. */
export interface SseSink {
  /** False when the caller should wait for 'drain' before writing more (node's stream contract). */
  write(chunk: string): boolean;
  end(): unknown;
  destroy(): unknown;
  /** Bytes accepted by `write` but not yet taken by the kernel: the memory a slow reader costs this process. */
  readonly writableLength: number;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/**
 * One SSE frame. JSON.stringify escapes newlines, so the payload always fits on one `data:` line; an event without
 * an id leaves the client's Last-Event-ID where it was.
 *
 * @example sink.write(sseFrame({ id: 7, event: 'transfer', data: { seq: 7 } }))
 */
export function sseFrame(event: { id?: string | number | bigint | undefined; event: string; data: unknown }): string {
  return `${event.id === undefined ? '' : `id: ${event.id}\n`}event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** Takes the response over from Fastify and starts the event stream on it. */
export function openSseSink(reply: FastifyReply): SseSink {
  reply.hijack();
  reply.raw.writeHead(200, sseHeaders);
  return reply.raw;
}

/** Resolves on the sink's 'drain', on its 'close', or when `signal` aborts. */
export function drained(sink: SseSink, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      sink.off('drain', done);
      sink.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    sink.once('drain', done);
    sink.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The `headers` schema of an event stream's route: the id of the last event a reconnecting client saw, as browsers'
 * EventSource send it (the route parses it, with the `last_event_id` query parameter as the other spelling).
 */
export const lastEventIdHeaders = validatedByHandler({
  type: 'object',
  properties: { 'last-event-id': { type: 'string', maxLength: 128, description: 'The id of the last event seen: the stream resumes after it' } },
});
