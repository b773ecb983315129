import { isoTime, nullable, uuid } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import type { AlarmRow } from '../db/schema.ts';

/** The alarm as callers see it; the owner DID and the dispatcher's bookkeeping stay inside. */
export const AlarmView = Type.Object({
  id: uuid(),
  label: Type.String(),
  kind: Type.Union([Type.Literal('once'), Type.Literal('cron')]),
  cron_expr: Type.String(),
  timezone: Type.String(),
  next_fire_at: isoTime('When it fires next'),
  conversation_id: Type.String(),
  wake_message: Type.String(),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'The opaque object delivered on wake' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('fired'), Type.Literal('cancelled'), Type.Literal('failed')]),
  idempotency_key: Type.String(),
  max_failures: Type.Integer(),
  failure_count: Type.Integer(),
  last_error: Type.String(),
  created_at: isoTime(),
  last_fired_at: nullable(isoTime()),
});

export function alarmView(row: AlarmRow) {
  return {
    id: row.id,
    label: row.label,
    kind: row.kind,
    cron_expr: row.cron_expr,
    timezone: row.timezone,
    next_fire_at: row.next_fire_at.toISOString(),
    conversation_id: row.conversation_id,
    wake_message: row.wake_message,
    payload: row.payload,
    status: row.status,
    idempotency_key: row.idempotency_key,
    max_failures: row.max_failures,
    failure_count: row.failure_count,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
    last_fired_at: row.last_fired_at?.toISOString() ?? null,
  };
}
