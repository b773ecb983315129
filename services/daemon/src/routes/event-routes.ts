import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { openSseSink, sseFrame } from '@platform/kit/http/sse';
import { nonJsonResponse } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import type { Subscriber } from '../events/subscriber.ts';
import { type IntentState, isTerminal } from '../intents/intent-state.ts';
import type { RouteDeps } from './route-deps.ts';
import { pendingView } from './views.ts';

function snapshotOf(state: IntentState) {
  return {
    intent_id: state.id,
    status: state.status,
    last_seq: state.last_seq,
    prose: state.prose,
    pending_gates: pendingView(state),
    steps: state.steps.map((step) => ({ id: step.id, kind: step.kind, title: step.title, status: step.status, ...(step.tool ? { tool: step.tool } : {}) })),
    result: state.result ?? null,
  };
}

/** An intent stream's Last-Event-ID: `12` or `12.3`; the journal replays from the seq after the whole part. */
function lastSeqOf(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const match = /^(\d{1,9})(?:\.\d{1,9})?$/.exec(raw);
  if (!match) throw invalidRequest('Last-Event-ID of an intent stream is an event id of that stream, like 12 or 12.3');
  return Number(match[1]);
}

/**
 * GET /events: the live transcript as SSE. With `intent_id`, one intent's stream: a `snapshot` of its state first,
 * then (with Last-Event-ID) every envelope after that id read back from the journal, then live events; it ends after
 * the intent's terminal event. Every event carries an id to resume from, the snapshot too. Heartbeats every DAEMON_HEARTBEAT_SECONDS. Closing the app ends every stream.
 */
export function registerEventRoutes(app: ServiceApp, deps: RouteDeps): void {
  app.addHook('preClose', () => deps.broker.stop());
  app.get('/events', {
    schema: {
      description: 'Server-sent events: say, status, notice, message, step.*, and per intent gate.invoked, intent.attest, intent.fail, intent.cancel.',
      querystring: Type.Object({
        intent_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
        last_event_id: Type.Optional(Type.String({ maxLength: 64, description: 'For a first connect from a browser; the Last-Event-ID header wins' })),
      }),
      response: { 200: nonJsonResponse('text/event-stream', 'The events, one SSE message each; an intent stream opens with a snapshot') },
    },
    handler: async (request, reply) => {
      const header = request.headers['last-event-id'];
      if (Array.isArray(header)) throw invalidRequest('Last-Event-ID must be sent once');
      if (header !== undefined && header.length > 64) throw invalidRequest('Last-Event-ID is longer than 64 characters');
      const lastEventId = header ?? request.query.last_event_id;
      const intentId = request.query.intent_id;
      const loaded = intentId === undefined ? undefined : await deps.book.get(intentId);
      if (intentId !== undefined && loaded === undefined) throw new ServiceError('not_found', `no intent ${intentId}`);
      const afterSeq = intentId === undefined ? undefined : lastSeqOf(lastEventId);
      if (!deps.broker.canSubscribe()) throw new ServiceError('unavailable', 'too many open event streams; retry later');
      const sink = openSseSink(reply);
      let subscriber: Subscriber | undefined;
      if (loaded === undefined) subscriber = deps.broker.subscribeAll(sink, lastEventId);
      else {
        // The snapshot's id is where what follows it continues: the state it shows (its last_seq) on a first connect,
        // the client's own position when the replay from the journal follows, so resuming from it never skips one.
        const snapshotId = String(afterSeq ?? loaded.state.last_seq);
        // Nothing is awaited from here to release, so no live event can slip between the replay and the stream.
        subscriber = deps.broker.subscribeIntent(loaded.state.id, sink, snapshotId);
        subscriber?.sendNow(sseFrame({ id: snapshotId, event: 'snapshot', data: snapshotOf(loaded.state) }), snapshotId);
        for (const envelope of loaded.envelopes)
          if (afterSeq !== undefined && envelope.seq > afterSeq)
            subscriber?.sendNow(sseFrame({ id: envelope.seq, event: envelope.kind, data: { intent_id: loaded.state.id, envelope } }), String(envelope.seq));
        subscriber?.release(loaded.state.last_seq);
        if (isTerminal(loaded.state.status)) subscriber?.endWhenFlushed();
      }
      if (subscriber === undefined) return void sink.end();
      request.raw.on('close', () => subscriber.close());
      reply.raw.on('error', (error) => request.log.debug({ err: error }, 'event stream write failed'));
    },
  });
}
