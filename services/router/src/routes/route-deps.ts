import type { Clock } from '@platform/kit/clock';
import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import type { ServiceTracing } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { JwtVerifier } from '../auth/jwt-verifier.ts';
import type { RouterConfig } from '../config.ts';
import type { Activity } from '../environments/idle-reaper.ts';
import type { EnvironmentProvider } from '../environments/provider.ts';
import type { WakeCoordinator } from '../environments/wake-coordinator.ts';
import type { InvitesRepository } from '../invites/invites.repository.ts';
import type { RouterMetrics } from '../metrics.ts';
import type { UserAccess } from '../users/access.ts';
import type { Provisioner } from '../users/provisioner.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import type { UsersRepository } from '../users/users.repository.ts';

export interface RouteDeps {
  config: RouterConfig;
  clock: Clock;
  logger: Logger;
  version: string;
  ping: () => Promise<boolean>;
  users: UsersRepository;
  directory: UserDirectory;
  invites: InvitesRepository;
  provisioner: Provisioner;
  access: UserAccess;
  provider: EnvironmentProvider;
  wake: WakeCoordinator;
  activity: Activity;
  /** Undefined when no identity provider is configured (development): authenticated routes answer 503. */
  verifier: JwtVerifier | undefined;
  /** The bearer of a user's daemon. */
  daemonToken: (userId: string) => string;
  /** The router's own metrics (metrics.ts); the kit's HTTP and database ones are in `serviceMetrics`. */
  metrics: RouterMetrics;
  /** The registry both listeners count into; `/metrics` and `/metrics/daemons` are served on the internal one only. */
  serviceMetrics: ServiceMetrics;
  /** Keep-alive connections to the daemons and to the gateway (undici Agents). */
  agents: { environments: Dispatcher; gateway: Dispatcher };
  /** The router's tracing: both listeners' server spans (the proxy's and the wake's client spans follow the active one). */
  tracing: ServiceTracing;
}
