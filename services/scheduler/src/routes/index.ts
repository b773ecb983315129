import type { Clock } from '@platform/kit/clock';
import type { ServiceApp } from '@platform/kit/http/create-app';
import type { AlarmsRepository } from '../alarms/alarms.repository.ts';
import { registerCancelAlarm } from './cancel-alarm.ts';
import { registerCreateAlarm } from './create-alarm.ts';
import { registerGetAlarm } from './get-alarm.ts';
import { registerListAlarms } from './list-alarms.ts';

export interface RouteDeps {
  repository: AlarmsRepository;
  clock: Clock;
}

/** Every alarm route; all sit behind the transport bearer and the principal token. */
export function registerAlarmRoutes(app: ServiceApp, deps: RouteDeps): void {
  registerCreateAlarm(app, deps);
  registerListAlarms(app, deps);
  registerGetAlarm(app, deps);
  registerCancelAlarm(app, deps);
}
