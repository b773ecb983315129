import { okSchema } from '@platform/kit/envelope';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { AlarmView, alarmView } from '../alarms/alarm-view.ts';
import { AlarmIdParams, alarmNotFound, isAlarmId } from './get-alarm.ts';
import type { RouteDeps } from './route-deps.ts';

export function registerCancelAlarm(app: ServiceApp, deps: RouteDeps): void {
  app.delete('/v1/alarms/:id', {
    schema: {
      description: 'Cancel an active alarm. Repeatable: a fired, cancelled or failed alarm is returned unchanged.',
      params: AlarmIdParams,
      response: { 200: okSchema(AlarmView) },
    },
    handler: async (request) => {
      const row = isAlarmId(request.params.id) ? await deps.repository.cancelOwned(principalOf(request).did, request.params.id) : undefined;
      if (!row) throw alarmNotFound();
      return { ok: true as const, data: alarmView(row) };
    },
  });
}
