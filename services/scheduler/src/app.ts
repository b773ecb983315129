import { NonceStore } from '@platform/kit/auth/nonce-store';
import { actorOwners } from '@platform/kit/auth/owner-actor';
import { schedulerOwnerTokens } from '@platform/kit/auth/owner-token';
import { deriveTokenKey } from '@platform/kit/auth/principal-token';
import type { Clock } from '@platform/kit/clock';
import { createServiceApp, type ObservabilityDeps, observabilityOptions } from '@platform/kit/http/create-app';
import { registerHandshakeRoutes } from '@platform/kit/http/handshake-routes';
import { registerHealthRoutes } from '@platform/kit/http/health-routes';
import { requirePrincipal } from '@platform/kit/http/principal';
import { requireTransportBearer } from '@platform/kit/http/transport-bearer';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { AlarmsRepository } from './alarms/alarms.repository.ts';
import { alarmLimits } from './alarms/limits.ts';
import type { SchedulerSchema } from './db/schema.ts';
import type { CheckWakeable } from './dispatch/wake-check.ts';
import { registerAlarmRoutes } from './routes/index.ts';

export const serviceName = 'scheduler';
export const serviceVersion = '0.1.0';

export interface AppDeps extends ObservabilityDeps {
  db: Kysely<SchedulerSchema>;
  ping: () => Promise<boolean>;
  clock: Clock;
  logger: Logger;
  transportToken: string;
  agentAuthSecret: string;
  /** Refuses an alarm whose wakes its agent would refuse (SCHEDULER_WAKE_CHECK); none: every alarm is made. */
  checkWakeable?: CheckWakeable;
}

/** The scheduler's HTTP surface. No listening, no environment: everything arrives in `deps`. */
export function buildApp(deps: AppDeps) {
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: alarmLimits.bodyBytes,
    api: { title: serviceName, version: serviceVersion },
    ...observabilityOptions(deps),
  });
  const tokenKey = deriveTokenKey(deps.agentAuthSecret, serviceName);
  // A daemon holds its user's owner token (sch1): the kit's handshake and principal checks then accept only that
  // user's DIDs, so nobody creates an alarm that wakes another user's daemon (wakes are routed by the DID's user id).
  const owners = actorOwners(deps.transportToken, schedulerOwnerTokens);
  requireTransportBearer(app, { token: deps.transportToken, publicPaths: ['/', '/healthz'], ...(owners && { owners }) });
  requirePrincipal(app, { header: 'X-Scheduler-Agent', tokenKey, clock: deps.clock, prefixes: ['/v1/alarms'] });
  registerHealthRoutes(app, { service: serviceName, version: serviceVersion, ping: deps.ping });
  registerHandshakeRoutes(app, { service: serviceName, nonces: new NonceStore(deps.db, deps.clock), tokenKey, clock: deps.clock });
  registerAlarmRoutes(app, {
    repository: new AlarmsRepository(deps.db, deps.clock),
    clock: deps.clock,
    ...(deps.checkWakeable && { checkWakeable: deps.checkWakeable }),
  });
  return app;
}
