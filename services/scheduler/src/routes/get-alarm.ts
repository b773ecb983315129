import { okSchema } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { Type } from 'typebox';
import { AlarmView, alarmView } from '../alarms/alarm-view.ts';
import type { RouteDeps } from './route-deps.ts';

/** Ids that are not UUIDs cannot name an alarm: 404 like any unknown id, without asking the database. */
export const AlarmIdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The alarm id (a UUID)' }) });
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function alarmNotFound(): ServiceError {
  return new ServiceError('not_found', 'alarm not found');
}

export function isAlarmId(id: string): boolean {
  return uuid.test(id);
}

export function registerGetAlarm(app: ServiceApp, deps: RouteDeps): void {
  app.get('/v1/alarms/:id', {
    schema: { description: "One of the caller's alarms.", params: AlarmIdParams, response: { 200: okSchema(AlarmView) } },
    handler: async (request) => {
      const row = isAlarmId(request.params.id) ? await deps.repository.findOwned(principalOf(request).did, request.params.id) : undefined;
      if (!row) throw alarmNotFound();
      return { ok: true as const, data: alarmView(row) };
    },
  });
}
