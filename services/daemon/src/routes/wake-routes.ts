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
    // The scheduler's check at alarm creation (SCHEDULER_WAKE_CHECK): answer as a wake would be, take nothing.
    check: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const keyDid = Type.String({ minLength: 1, maxLength: 256, description: 'The linked key’s DID, did:platform:<this user>:<16 hex>' });
const WakeKey = Type.Object({ did: Type.String(), public_key: Type.String(), linked_at: Type.String() });
const WakeKeyList = Type.Object({ did: Type.String({ description: 'This agent’s own DID (always accepted)' }), keys: Type.Array(WakeKey) });
const linkBody = Type.Object(
  {
    public_key: Type.String({ minLength: 64, maxLength: 64, pattern: '^[0-9a-fA-F]{64}$' }),
    signature: Type.String({
      minLength: 128,
      maxLength: 128,
      pattern: '^[0-9a-fA-F]{128}$',
      description: 'ed25519 over platform-daemon-wake-key-v1:<agent did>:<did>',
    }),
  },
  { additionalProperties: false },
);

function sameDid(a: string, b: string): boolean {
  const [left, right] = [parseDid(a), parseDid(b)];
  return left !== undefined && right !== undefined && canonicalDid(left) === canonicalDid(right);
}

/** POST /wake (the router's, behind the bearer), the keys whose alarms wake this agent, and POST /shutdown. */
export function registerWakeRoutes(app: ServiceApp, deps: RouteDeps): void {
  app.post('/wake', {
    schema: {
      description:
        'Turns a scheduler wake into a chat turn in its conversation. Repeats of an Idempotency-Key are acknowledged and dropped. 202 once the wake is durably recorded; the turn runs after. With `check: true` nothing is taken: 200 (accepted false) when such a wake would be, the same refusal when not.',
      body: wakeBody,
      response: { 200: answers(WakeAccepted), 202: answers(WakeAccepted) },
    },
    handler: async (request, reply) => {
      if (deps.runner.draining) throw new ServiceError('unavailable', 'the daemon is shutting down; the scheduler will retry');
      const body = request.body;
      if (body.user_id !== undefined && body.user_id !== deps.identity.userId) throw new ServiceError('forbidden', 'this wake is for another user');
      // The DID that set the alarm: this agent's own (any spelling), or a key its user linked with it.
      if (body.did !== undefined && !sameDid(body.did, deps.identity.did) && !deps.wakeKeys.has(body.did))
        throw new ServiceError(
          'forbidden',
          `this wake is for another agent: ${body.did} is neither this agent’s DID nor a key its user linked (platform agent use links one)`,
        );
      if (body.check === true) return { ok: true as const, data: { accepted: false, duplicate: false, conversation_id: body.conversation_id || 'default' } };
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

  const agent = () => ({ did: deps.identity.did, userId: deps.identity.userId });
  app.get('/wake-keys', {
    schema: { description: 'The keys whose alarms wake this agent besides its own DID (linked by its user).', response: { 200: answers(WakeKeyList) } },
    handler: async () => ({ ok: true as const, data: { did: deps.identity.did, keys: deps.wakeKeys.list() } }),
  });
  app.put('/wake-keys/:did', {
    schema: {
      description:
        'Links a key of this user with this agent, so the alarms it makes wake the agent (`platform agent use`). The key proves itself by its signature over platform-daemon-wake-key-v1:<agent did>:<did>; only the public key is sent.',
      params: Type.Object({ did: keyDid }),
      body: linkBody,
      response: { 200: answers(Type.Object({ key: WakeKey, created: Type.Boolean() })) },
    },
    handler: async (request) => ({ ok: true as const, data: await deps.wakeKeys.link(agent(), { did: request.params.did, ...request.body }) }),
  });
  app.delete('/wake-keys/:did', {
    schema: {
      description: 'Unlinks a key: its alarms no longer wake this agent.',
      params: Type.Object({ did: keyDid }),
      response: { 200: answers(Type.Object({ did: Type.String(), removed: Type.Boolean() })) },
    },
    handler: async (request) => ({
      ok: true as const,
      data: { did: request.params.did, removed: await deps.wakeKeys.unlink(agent(), request.params.did) },
    }),
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
