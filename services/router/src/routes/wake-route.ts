import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parseDid } from '@platform/kit/auth/did';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { tracedFetch } from '@platform/kit/observability/tracing';
import { validatedByHandler } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import type { WakeDeliveryOutcome } from '../metrics.ts';
import { requireBearer } from './admin-routes.ts';
import { withRetryAfter } from './authenticate.ts';
import { environmentUser, readyAndActive, waitDeadline } from './proxy-route.ts';
import { daemonWakeAnswer } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

/** The scheduler's wake body (services/scheduler/README.md, Wake delivery). */
const wakeBody = Type.Object(
  {
    user_id: Type.String({ format: 'uuid' }),
    // Optional: schedulers before it sent none. The DID that created the alarm, passed on for the daemon to check.
    did: Type.Optional(Type.String({ maxLength: 256 })),
    alarm_id: Type.String({ maxLength: 64 }),
    label: Type.String({ maxLength: 200 }),
    wake_message: Type.String({ minLength: 1, maxLength: 16_384 }),
    conversation_id: Type.String({ maxLength: 200 }),
    payload: Type.Record(Type.String(), Type.Unknown()),
    scheduled_for: Type.String({ maxLength: 64 }),
    fired_at: Type.String({ maxLength: 64 }),
    attempt: Type.Integer({ minimum: 0 }),
    // The scheduler's check when an alarm is made (SCHEDULER_WAKE_CHECK): the daemon answers as for a wake, takes nothing.
    check: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** 202 the daemon took the wake, 200 it had it already (or, for a check, would take it); 503 retried, the rest refused. */
function deliveryOutcome(status: number, check: boolean): WakeDeliveryOutcome {
  if (status >= 500) return 'failed';
  if (status === 200 || status === 202) return check ? 'checked' : status === 202 ? 'accepted' : 'duplicate';
  return 'refused';
}

/**
 * `POST /internal/wake` (mounted only with ROUTER_WAKE_TOKEN): wakes the owner's environment and hands the wake to
 * their daemon's `/wake` with the same Idempotency-Key. It answers 2xx only once the daemon has accepted the wake, so
 * the scheduler's retry ladder covers every failure on the way.
 */
export async function registerWakeRoute(app: ServiceApp, deps: RouteDeps): Promise<void> {
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    requireBearer(scope, deps.config.wakeToken, 'ROUTER_WAKE_TOKEN', 'wakeToken');
    // Counted by the answer the scheduler got (a caller without the wake bearer delivered nothing).
    scope.addHook('onResponse', async (request, reply) => {
      if (reply.statusCode !== 401)
        deps.metrics.delivered(deliveryOutcome(reply.statusCode, (request.body as { check?: unknown } | undefined)?.check === true));
    });
    scope.post('/internal/wake', {
      schema: {
        description: 'Delivers a scheduler wake to the user’s daemon; answers as the daemon did (202 taken, 200 a repeat).',
        body: wakeBody,
        // Checked by the handler (its 400 names what the scheduler sends), passed on to the daemon's /wake.
        headers: validatedByHandler(
          Type.Object({
            'idempotency-key': Type.String({ maxLength: 256, description: 'The wake’s key: <alarm_id>:<scheduled_for>, as the scheduler sends it' }),
          }),
        ),
        // The daemon's answer goes on as it came (text), whatever its status: described, never serialised here.
        response: { default: daemonWakeAnswer },
      },
      handler: async (request, reply) => {
        const key = request.headers['idempotency-key'];
        if (typeof key !== 'string' || key === '') throw invalidRequest('Idempotency-Key is required (the scheduler sends <alarm_id>:<scheduled_for>)');
        const userId = request.body.user_id.toLowerCase();
        const did = request.body.did;
        if (did !== undefined && parseDid(did)?.owner !== userId) throw invalidRequest('did must be a DID of user_id (did:platform:<user_id>:<key>)');
        try {
          const row = await deps.directory.get(userId);
          if (row === undefined) throw new ServiceError('not_found', `no user ${userId}`);
          const deadline = waitDeadline(deps);
          const user = environmentUser(await deps.access.activeUser(userId, deadline));
          const ready = await readyAndActive(deps, user, deadline);
          try {
            const answer = await tracedFetch(`${ready.address}/wake`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'idempotency-key': key, authorization: `Bearer ${deps.daemonToken(userId)}` },
              body: JSON.stringify(request.body),
              signal: AbortSignal.timeout(10_000),
            });
            const text = await answer.text();
            reply.status(answer.status).header('content-type', answer.headers.get('content-type') ?? 'application/json');
            return reply.send(text);
          } catch (error) {
            throw new ServiceError('unavailable', 'the daemon did not take the wake; the scheduler will retry', { cause: error, details: { retry_after: 1 } });
          } finally {
            deps.activity.end(userId);
          }
        } catch (error) {
          throw withRetryAfter(reply, error);
        }
      },
    });
  });
}
