import type { ServiceApp } from '@platform/kit/http/create-app';
import { registerCancelAlarm } from './cancel-alarm.ts';
import { registerCreateAlarm } from './create-alarm.ts';
import { registerGetAlarm } from './get-alarm.ts';
import { registerListAlarms } from './list-alarms.ts';
import type { RouteDeps } from './route-deps.ts';

/** Every alarm route; all sit behind the transport bearer and the principal token. */
export function registerAlarmRoutes(app: ServiceApp, deps: RouteDeps): void {
  registerCreateAlarm(app, deps);
  registerListAlarms(app, deps);
  registerGetAlarm(app, deps);
  registerCancelAlarm(app, deps);
}
