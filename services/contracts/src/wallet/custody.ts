import { ServiceError } from '@platform/kit/errors';
import type { ChainProfile } from '../chains/chain-profiles.ts';
import type { CustodyPolicy } from '../config.ts';
import type { WalletsRepository } from './wallets.repository.ts';

/**
 * The custody policy, enforced before anything is signed: the chains a wallet may sign for, a cap per
 * transaction (value plus the most the fee could be) and a cap per wallet over any 24 hours.
 */
export class Custody {
  readonly #policy: CustodyPolicy;
  readonly #repository: WalletsRepository;

  constructor(options: { policy: CustodyPolicy; repository: WalletsRepository }) {
    this.#policy = options.policy;
    this.#repository = options.repository;
  }

  checkChain(profile: ChainProfile): void {
    const allowed = this.#policy.allowedChains;
    if (allowed !== '*' && !allowed.includes(profile.id)) {
      throw new ServiceError('forbidden', `the custody policy does not allow signing on chain ${profile.id}`, {
        details: { reason: 'chain_not_allowed', chain: profile.id },
      });
    }
  }

  /** The effective per-transaction cap: the policy's, lowered by the caller's spend_cap_wei when given. */
  capFor(requestedCapWei: bigint | undefined): bigint {
    return requestedCapWei !== undefined && requestedCapWei < this.#policy.spendCapWei ? requestedCapWei : this.#policy.spendCapWei;
  }

  /** Refuses a transaction over the caps, or records its maximum cost; returns the spend record's id. */
  async reserve(spend: { did: string; profile: ChainProfile; purpose: string; maxCostWei: bigint; requestedCapWei: bigint | undefined }): Promise<string> {
    const capWei = this.capFor(spend.requestedCapWei);
    if (spend.maxCostWei > capWei) {
      throw new ServiceError('forbidden', `value plus maximum fee (${spend.maxCostWei} wei) exceeds the per-transaction cap (${capWei} wei)`, {
        details: { reason: 'spend_cap_exceeded', max_cost_wei: spend.maxCostWei.toString(), cap_wei: capWei.toString() },
      });
    }
    const reservation = await this.#repository.reserveSpend({
      did: spend.did,
      chainId: spend.profile.chainId,
      purpose: spend.purpose,
      maxCostWei: spend.maxCostWei,
      dailyCapWei: this.#policy.dailyCapWei,
    });
    if (!reservation.ok) {
      throw new ServiceError('forbidden', `the wallet's daily cap (${this.#policy.dailyCapWei} wei over 24 hours) leaves no room for ${spend.maxCostWei} wei`, {
        details: { reason: 'daily_cap_exceeded', spent_wei: reservation.spentWei.toString(), daily_cap_wei: this.#policy.dailyCapWei.toString() },
      });
    }
    return reservation.id;
  }

  attach(spendId: string, txHash: string): Promise<void> {
    return this.#repository.attachTransaction(spendId, txHash);
  }

  release(spendId: string): Promise<void> {
    return this.#repository.releaseSpend(spendId);
  }
}
