import { invalidRequest } from '@platform/kit/errors';
import { lastEventIdHeaders, openSseSink } from '@platform/kit/http/sse';
import { nonJsonResponse } from '@platform/kit/wire-schemas';
import type { FastifyInstance } from 'fastify';
import type { EventHub } from './event-hub.ts';

const maxEventId = 2n ** 63n - 1n;

/**
 * The id a client last saw: `0` (replay the whole log) to `9223372036854775807` in decimal (ids are int8), or
 * undefined when absent or empty (EventSource sends no header before its first event, and `?last_event_id=` may be left blank).
 * Anything else, a repeated header included, is a 400 rather than a silent restart from the head, which would
 * hide a client bug.
 */
export function parseLastEventId(raw: string | string[] | undefined): bigint | undefined {
  if (raw === undefined || raw === '') return undefined;
  const id = typeof raw === 'string' && /^\d{1,19}$/.test(raw) ? BigInt(raw) : -1n;
  if (id < 0n || id > maxEventId) throw invalidRequest('Last-Event-ID must be an event id (a decimal integer)');
  return id;
}

/**
 * `GET /v1/stream`: the public SSE stream of transfer and anchor events. A reconnecting client sends
 * `Last-Event-ID` and gets every event after it, then live events. `?last_event_id=` does the same for a first
 * connect (browsers' EventSource cannot set headers); the header wins, since EventSource reconnects with the
 * original URL but the newer header. Closing the app stops the hub: open streams would otherwise hold
 * `app.close()` forever.
 */
export function registerStreamRoute(app: FastifyInstance, deps: { hub: EventHub }): void {
  app.addHook('preClose', () => deps.hub.stop());
  app.get<{ Querystring: { last_event_id?: string } }>(
    '/v1/stream',
    {
      schema: {
        description: 'The public stream of transfer and anchor events (SSE); Last-Event-ID resumes after an event.',
        querystring: { type: 'object', properties: { last_event_id: { type: 'string', maxLength: 128 } } },
        headers: lastEventIdHeaders,
        response: { 200: nonJsonResponse('text/event-stream', 'One `transfer` or `anchor` event per message, its id the event id') },
      },
    },
    async (request, reply) => {
      const lastEventId = parseLastEventId(request.headers['last-event-id'] ?? request.query.last_event_id);
      // Throws 503 before anything is written when full, so the refusal is still an envelope.
      const subscription = deps.hub.subscribe(lastEventId, () => openSseSink(reply));
      request.raw.on('close', () => subscription.close());
      // A client gone before the listener was attached would otherwise hold a slot until the hub stops.
      if (request.raw.socket.destroyed) subscription.close();
      // A write racing a disconnect can fail; the 'close' above already forgets the subscriber.
      reply.raw.on('error', (error) => request.log.debug({ err: error }, 'event stream write failed'));
    },
  );
}
