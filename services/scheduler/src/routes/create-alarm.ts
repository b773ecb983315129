import { okSchema } from '@platform/kit/envelope';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { isoTime, uuid } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import { AlarmView } from '../alarms/alarm-view.ts';
import { createAlarm } from '../alarms/create-alarm.ts';
import { alarmLimits as limits } from '../alarms/limits.ts';
import type { RouteDeps } from './route-deps.ts';

const CreateAlarmBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('once'), Type.Literal('cron')], { description: 'once fires one time; cron recurs' }),
    wake_message: Type.String({ minLength: 1, maxLength: limits.wakeMessageChars, description: 'Turn delivered to the agent on wake' }),
    delay_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: limits.horizonSeconds, description: 'once: seconds from now' })),
    fire_at: Type.Optional(Type.String({ maxLength: 64, description: 'once: absolute ISO 8601 time with an offset' })),
    cron_expr: Type.Optional(Type.String({ maxLength: limits.cronExprChars, description: 'cron: 5-field expression' })),
    timezone: Type.Optional(Type.String({ maxLength: limits.timezoneChars, description: 'IANA timezone; default UTC' })),
    label: Type.Optional(Type.String({ maxLength: limits.labelChars })),
    conversation_id: Type.Optional(Type.String({ maxLength: limits.conversationIdChars })),
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Opaque object delivered on wake' })),
    idempotency_key: Type.Optional(Type.String({ maxLength: limits.idempotencyKeyChars, description: 'Dedupe key scoped to the owner DID' })),
    max_failures: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.maxFailures, description: 'Consecutive failures before a once alarm fails' })),
  },
  { additionalProperties: false },
);

export function registerCreateAlarm(app: ServiceApp, deps: RouteDeps): void {
  app.post('/v1/alarms', {
    schema: {
      description:
        'Create an alarm for the calling agent (or return the one its idempotency key names). With SCHEDULER_WAKE_CHECK, 403 `wake_refused` when the wake receiver says its wakes would be refused.',
      body: CreateAlarmBody,
      response: { 200: okSchema(Type.Object({ id: uuid(), next_fire_at: isoTime(), status: AlarmView.properties.status })) },
    },
    handler: async (request) => {
      const row = await createAlarm(deps.repository, deps.clock, principalOf(request), request.body, deps.checkWakeable);
      return { ok: true as const, data: { id: row.id, next_fire_at: row.next_fire_at.toISOString(), status: row.status } };
    },
  });
}
