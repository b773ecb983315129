import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { Logger } from 'pino';
import type { UserRow } from '../db/schema.ts';
import type { EnvironmentProvider } from '../environments/provider.ts';
import type { UserDirectory } from './user-directory.ts';
import type { Profile, UsersRepository } from './users.repository.ts';

/** A provisioning left longer than this by another instance is taken over (that instance stopped half way). */
const staleProvisioningMs = 5 * 60_000;

/** Seconds a client is told to wait while an environment is being provisioned. */
export const provisioningRetryAfter = 5;

/**
 * Creates users and their environments exactly once: in this process one provisioning per user runs at a time (others
 * wait for it), and across instances the row's insert decides who provisions (the others see `provisioning`).
 */
export class Provisioner {
  readonly #users: UsersRepository;
  readonly #directory: UserDirectory;
  readonly #provider: EnvironmentProvider;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #defaultRegion: string;
  readonly #inFlight = new Map<string, Promise<UserRow>>();

  constructor(options: {
    users: UsersRepository;
    directory: UserDirectory;
    provider: EnvironmentProvider;
    clock: Clock;
    logger: Logger;
    defaultRegion: string;
  }) {
    this.#users = options.users;
    this.#directory = options.directory;
    this.#provider = options.provider;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#defaultRegion = options.defaultRegion;
  }

  /** Whether a `provisioning` row was left unfinished long enough to be taken over (its instance stopped half way). */
  abandoned(row: UserRow): boolean {
    return row.state === 'provisioning' && row.updated_at.getTime() < this.#clock.now().getTime() - staleProvisioningMs;
  }

  /** Ensures the user exists with an environment; resolves with the row (`provisioning` when another instance has it). */
  provision(id: string, profile: Profile = {}): Promise<UserRow> {
    let flight = this.#inFlight.get(id);
    if (flight === undefined) {
      flight = this.#provision(id, profile);
      this.#inFlight.set(id, flight);
      const land = () => {
        if (this.#inFlight.get(id) === flight) this.#inFlight.delete(id);
      };
      flight.then(land, land);
    }
    return flight;
  }

  async #provision(id: string, profile: Profile): Promise<UserRow> {
    const claim = await this.#users.claimProvisioning(id, profile, this.#provider.name, this.#defaultRegion);
    this.#directory.invalidate(id);
    let row = claim.row;
    if (!claim.created) {
      if (row.state !== 'provisioning') return row;
      const taken = await this.#users.takeOverProvisioning(id, new Date(this.#clock.now().getTime() - staleProvisioningMs));
      if (taken === undefined) return row;
      row = taken;
      this.#logger.warn({ user: id }, 'taking over a provisioning left unfinished');
    }
    const environment = await this.#provider.ensure({ id, region: row.region, environmentId: row.environment_id, volume: row.volume }).catch((error) => {
      // The row stays `provisioning`: the next provisioning of this user (a request, POST /admin/users) takes it over once it is stale.
      this.#logger.error({ err: error, user: id }, 'the provider could not provision the environment');
      throw new ServiceError('unavailable', 'the environment could not be prepared (its provider failed); retry shortly', {
        cause: error,
        details: { retry_after: provisioningRetryAfter },
      });
    });
    const active = await this.#users.markActive(id, { environment_id: environment.environmentId, address: environment.address, volume: environment.volume });
    this.#directory.invalidate(id);
    this.#logger.info({ user: id, environment: environment.environmentId }, 'user provisioned');
    return active;
  }
}
