import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import { limits } from '../limits.ts';
import { answers, Draining, WakeAccepted } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';
import { conversationId } from './schemas.ts';

/** The scheduler's wake body, as the router hands it over; every field the scheduler sends is known. */
const wakeBody = Type.Object(
  {
    wake_message: Type.String({ minLength: 1, maxLength: 16_384 }),
    conversation_id: Type.Optional(Type.Union([conversationId, Type.Literal('')])),
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    user_id: Type.Optional(Type.String({ maxLength: 128 })),
    did: Type.Optional(Type.String({ maxLength: 256 })),
    alarm_id: Type.Optional(Type.String({ maxLength: 64 })),
    label: Type.Optional(Type.String({ maxLength: 200 })),
    scheduled_for: Type.Optional(Type.String({ maxLength: 64 })),
    fired_at: Type.Optional(Type.String({ maxLength: 64 })),
    attempt: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

function sameDid(a: string, b: string): boolean {
  const [left, right] = [parseDid(a), parseDid(b)];
  return left !== undefined && right !== undefined && canonicalDid(left) === canonicalDid(right);
}

/** POST /wake (the router's, behind the bearer) and POST /shutdown. */
export function registerWakeRoutes(app: ServiceApp, deps: RouteDeps): void {
  app.post('/wake', {
    schema: {
      description:
        'Turns a scheduler wake into a chat turn in its conversation. Repeats of an Idempotency-Key are acknowledged and dropped. 202 once the wake is durably recorded; the turn runs after.',
      body: wakeBody,
      response: { 200: answers(WakeAccepted), 202: answers(WakeAccepted) },
    },
    handler: async (request, reply) => {
      if (deps.runner.draining) throw new ServiceError('unavailable', 'the daemon is shutting down; the scheduler will retry');
      const body = request.body;
      if (body.user_id !== undefined && body.user_id !== deps.identity.userId) throw new ServiceError('forbidden', 'this wake is for another user');
      // The DID that set the alarm: only this agent's own (any spelling) may wake it.
      if (body.did !== undefined && !sameDid(body.did, deps.identity.did)) throw new ServiceError('forbidden', 'this wake is for another agent');
      const header = request.headers['idempotency-key'];
      if (Array.isArray(header)) throw invalidRequest('Idempotency-Key must be sent once');
      const key = header ?? (body.alarm_id && body.scheduled_for ? `${body.alarm_id}:${body.scheduled_for}` : undefined);
      if (key === undefined || key === '') throw invalidRequest('Idempotency-Key is required (the scheduler sends <alarm_id>:<scheduled_for>)');
      if (key.length > limits.wakeKeyChars) throw invalidRequest(`Idempotency-Key is longer than ${limits.wakeKeyChars} characters`);
      const accepted = await deps.wakes.accept(key, body);
      reply.status(accepted.duplicate ? 200 : 202);
      return { ok: true as const, data: { accepted: !accepted.duplicate, duplicate: accepted.duplicate, conversation_id: accepted.conversation_id } };
    },
  });

  // Drains and stops: new work is refused, the step in flight finishes, everything is on disk, then the process exits.
  app.post('/shutdown', {
    schema: { description: 'Drain and stop: new work is refused, the step in flight finishes, then the process exits.', response: { 202: answers(Draining) } },
    handler: async (_request, reply) => {
      reply.status(202);
      setImmediate(deps.requestShutdown);
      return { ok: true as const, data: { draining: true, walking: deps.runner.walking ?? null } };
    },
  });
}
