/** What the router knows of a user to run their environment. */
export interface EnvironmentUser {
  id: string;
  region: string;
  /** The stored environment id and volume, once provisioned. */
  environmentId: string | null;
  volume: string | null;
}

export type EnvironmentState = 'running' | 'starting' | 'stopped' | 'absent';

/** What provisioning recorded: stored on the user's row. */
export interface ProvisionedEnvironment {
  environmentId: string;
  /** A stable address, where the provider has one (Fly's private address); null when it changes per start. */
  address: string | null;
  volume: string;
}

/**
 * Where users' environments run, behind one interface chosen by ROUTER_PROVIDER. Every method is idempotent: ensure an
 * environment that exists, start one that runs, stop one that is stopped, destroy one that is gone, all succeed.
 */
export interface EnvironmentProvider {
  readonly name: string;
  /** Creates the environment and its volume if absent (blocks until the provider has them). */
  ensure(user: EnvironmentUser): Promise<ProvisionedEnvironment>;
  /** Starts it when it is not running; resolves once the provider says it is started (not yet ready). */
  start(user: EnvironmentUser): Promise<void>;
  stop(user: EnvironmentUser): Promise<void>;
  /** Stops it and removes it and its volume. */
  destroy(user: EnvironmentUser): Promise<void>;
  /** The daemon's base URL while it runs; undefined when it does not. */
  address(user: EnvironmentUser): Promise<string | undefined>;
  state(user: EnvironmentUser): Promise<EnvironmentState>;
  /** Users whose environments this provider runs right now (the idle reaper's list). */
  running(): string[];
  /** The router is stopping. */
  close(): Promise<void>;
}
