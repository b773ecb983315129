import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { UserRow } from '../db/schema.ts';
import { byDeadline, late } from '../environments/deadline.ts';
import { KeyedFlights } from '../environments/keyed-flights.ts';
import { wakeRefusal } from '../environments/wake-coordinator.ts';
import type { InvitesRepository } from '../invites/invites.repository.ts';
import { type Provisioner, provisioningRetryAfter } from './provisioner.ts';
import type { UserDirectory } from './user-directory.ts';

/**
 * What a verified user may reach, by the state of their row (the spec's table): active passes; provisioning is 503
 * with Retry-After; suspended 451; deleted 410; no row is 403 unless they redeemed an invite.
 *
 * A user who redeemed an invite and has no row yet is provisioned by their first request, which then goes on: that
 * request, and the user's requests that arrive while this router provisions them so, wait for it as for a wake, until
 * their deadline (ROUTER_WAKE_TIMEOUT after they asked) and at most ROUTER_MAX_WAITERS of them. Any other provisioning
 * (`POST /admin/users`, another instance) is the spec's `provisioning`: 503 at once, never a request held on a provider's
 * API. A provisioning another instance left unfinished (it stopped half way) is taken over by the next request.
 */
export class UserAccess {
  readonly #directory: UserDirectory;
  readonly #invites: InvitesRepository;
  readonly #provisioner: Provisioner;
  readonly #clock: Clock;
  readonly #wakeTimeoutMs: number;
  /** Provisionings begun by a user's own first request, which that user's requests may wait for. */
  readonly #firstStarts: KeyedFlights<UserRow>;

  constructor(options: {
    directory: UserDirectory;
    invites: InvitesRepository;
    provisioner: Provisioner;
    clock: Clock;
    wakeTimeoutMs: number;
    maxWaiters: number;
  }) {
    this.#directory = options.directory;
    this.#invites = options.invites;
    this.#provisioner = options.provisioner;
    this.#clock = options.clock;
    this.#wakeTimeoutMs = options.wakeTimeoutMs;
    this.#firstStarts = new KeyedFlights<UserRow>(options.maxWaiters);
  }

  /** The user's row when they may reach their environment; `deadline` (ms since the epoch) bounds any wait for it. */
  async activeUser(id: string, deadline: number): Promise<UserRow> {
    let row = await this.#directory.get(id);
    if (row === undefined) {
      if (!(await this.#invites.hasRedeemed(id)))
        throw new ServiceError('forbidden', 'no account for this user: redeem an invite first (POST /v/invites/redeem with {"code": "..."})', {
          details: { reason: 'no_invite' },
        });
      row = await this.#firstStart(id, deadline);
    } else if (row.state === 'provisioning' && (this.#firstStarts.has(id) || this.#provisioner.abandoned(row))) {
      row = await this.#firstStart(id, deadline);
    }
    switch (row.state) {
      case 'active':
        return row;
      case 'provisioning':
        throw wakeRefusal('your environment is being prepared; retry shortly', provisioningRetryAfter);
      case 'suspended':
        throw new ServiceError('account_suspended', 'this account is suspended');
      case 'deleted':
        throw new ServiceError('account_deleted', 'this account was deleted');
    }
  }

  /** First provisionings under way and the requests waiting for them, over every user. */
  totals(): { flights: number; waiters: number } {
    return this.#firstStarts.totals();
  }

  /** How many requests wait for the user's first provisioning now. */
  waiting(id: string): number {
    return this.#firstStarts.waiters(id);
  }

  #firstStart(id: string, deadline: number): Promise<UserRow> {
    const waiting = this.#firstStarts.join(
      id,
      () => this.#provisioner.provision(id),
      async (shared) => {
        const row = await byDeadline(this.#clock, deadline, shared);
        if (row === late)
          throw wakeRefusal(
            `your environment was not ready within ${this.#wakeTimeoutMs} ms (ROUTER_WAKE_TIMEOUT): it is still being prepared; retry shortly`,
            provisioningRetryAfter,
          );
        return row;
      },
    );
    if (waiting === undefined) throw wakeRefusal('too many requests are waiting for this environment to be prepared (ROUTER_MAX_WAITERS); retry shortly', 2);
    return waiting;
  }
}
