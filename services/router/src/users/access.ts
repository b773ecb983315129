import { ServiceError } from '@platform/kit/errors';
import type { UserRow } from '../db/schema.ts';
import type { InvitesRepository } from '../invites/invites.repository.ts';
import type { Provisioner } from './provisioner.ts';
import type { UserDirectory } from './user-directory.ts';

/** Seconds a client is told to wait while an environment is being provisioned. */
export const provisioningRetryAfter = 5;

/**
 * What a verified user may reach, by the state of their row (the spec's table): active passes; provisioning is 503
 * with Retry-After; suspended 451; deleted 410; no row is 403 unless they redeemed an invite, which provisions them
 * on this first request.
 */
export class UserAccess {
  readonly #directory: UserDirectory;
  readonly #invites: InvitesRepository;
  readonly #provisioner: Provisioner;

  constructor(directory: UserDirectory, invites: InvitesRepository, provisioner: Provisioner) {
    this.#directory = directory;
    this.#invites = invites;
    this.#provisioner = provisioner;
  }

  async activeUser(id: string): Promise<UserRow> {
    let row = await this.#directory.get(id);
    if (row === undefined) {
      if (!(await this.#invites.hasRedeemed(id)))
        throw new ServiceError('forbidden', 'no account for this user: redeem an invite first (POST /v/invites/redeem with {"code": "..."})', {
          details: { reason: 'no_invite' },
        });
      row = await this.#provisioner.provision(id);
    } else if (row.state === 'provisioning') {
      const local = this.#provisioner.inFlight(id);
      if (local) row = await local;
    }
    switch (row.state) {
      case 'active':
        return row;
      case 'provisioning':
        throw new ServiceError('unavailable', 'your environment is being prepared; retry shortly', { details: { retry_after: provisioningRetryAfter } });
      case 'suspended':
        throw new ServiceError('account_suspended', 'this account is suspended');
      case 'deleted':
        throw new ServiceError('account_deleted', 'this account was deleted');
    }
  }
}
