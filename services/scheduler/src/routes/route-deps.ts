import type { Clock } from '@platform/kit/clock';
import type { AlarmsRepository } from '../alarms/alarms.repository.ts';
import type { CheckWakeable } from '../dispatch/wake-check.ts';

/** What the alarm routes are given; in a file of its own so the route files need not import the route list. */
export interface RouteDeps {
  repository: AlarmsRepository;
  clock: Clock;
  checkWakeable?: CheckWakeable;
}
