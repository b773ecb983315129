import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { uuidv7 } from '@platform/kit/ids';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MarketplaceSchema, PayoutTable } from '../db/schema.ts';
import { digestOf } from './binding.ts';
import { availableOf, earningsOf } from './earnings.ts';
import { money } from './pricing.ts';
import { PaymentRefused, type SettlementGateway } from './settlement-gateway.ts';

export interface PayoutView {
  payout_id: string;
  service_id: string;
  to: string;
  amount: string;
  status: PayoutTable['status'];
  settlement_seq: string | null;
  error: string | null;
  created_at: string;
}

export const payoutView = (row: PayoutTable): PayoutView => ({
  payout_id: row.id,
  service_id: row.listing_id,
  to: row.to_did,
  amount: money(row.amount_micros),
  status: row.status,
  settlement_seq: row.settlement_seq === null ? null : row.settlement_seq.toString(),
  error: row.error,
  created_at: row.created_at.toISOString(),
});

/**
 * Developer payouts: everything a listing has earned and not yet been paid, from the marketplace's account at
 * settlement to the listing's `payout_did`. The amount is fixed and the payout recorded `pending` under a lock on
 * the listing (two requests at once cannot both pay the same earnings), then paid with an idempotency key of its
 * own id: a payout whose answer was lost is retried by the sweep and never paid twice. The marketplace keeps no
 * fee (decided; see the README).
 */
export class Payouts {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #settlement: SettlementGateway;

  constructor(options: { db: Kysely<MarketplaceSchema>; clock: Clock; logger: Logger; settlement: SettlementGateway }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#settlement = options.settlement;
  }

  async request(listingId: string, ownerAddress: string): Promise<PayoutView> {
    const row = await this.#db.transaction().execute(async (trx) => {
      const listing = await trx.selectFrom('listings').select(['id', 'owner_address', 'payout_did']).where('id', '=', listingId).forUpdate().executeTakeFirst();
      if (!listing) throw new ServiceError('not_found', 'service not found');
      if (listing.owner_address !== ownerAddress) throw new ServiceError('forbidden', 'only the service’s owner can take its payouts');
      if (listing.payout_did === null)
        throw new ServiceError('conflict', 'the service has no payout_did; set one with PATCH /v1/services/{id}', { details: { reason: 'no_payout_did' } });
      const earnings = (await earningsOf(trx, [listingId])).get(listingId);
      const available = earnings ? availableOf(earnings) : 0n;
      if (available <= 0n)
        throw new ServiceError('conflict', 'nothing to pay out yet: earnings count once captured at settlement', { details: { reason: 'nothing_to_pay' } });
      const payout: PayoutTable = {
        id: uuidv7(this.#clock.now().getTime()),
        listing_id: listingId,
        owner_address: ownerAddress,
        to_did: listing.payout_did,
        amount_micros: available,
        settlement_seq: null,
        status: 'pending',
        error: null,
        created_at: this.#clock.now(),
      };
      await trx.insertInto('payouts').values(payout).execute();
      return payout;
    });
    return this.pay(row);
  }

  /** Pays a pending payout (again, after a lost answer: the same key). Settlement being away leaves it pending. */
  async pay(row: PayoutTable): Promise<PayoutView> {
    try {
      const paid = await this.#settlement.pay(
        row.to_did,
        money(row.amount_micros),
        digestOf({ v: 'platform-marketplace-payout-v1', payout_id: row.id }),
        `mkt:payout:${row.id}`,
      );
      return payoutView(await this.#mark(row.id, { status: 'paid', settlement_seq: BigInt(paid.seq) }));
    } catch (error) {
      if (!(error instanceof PaymentRefused)) throw error;
      this.#logger.warn({ payout: row.id, code: error.code, reason: error.reason }, 'settlement refused a payout');
      return payoutView(await this.#mark(row.id, { status: 'failed', error: `${error.code}: ${error.message}` }));
    }
  }

  #mark(id: string, changes: Partial<PayoutTable>): Promise<PayoutTable> {
    return this.#db.updateTable('payouts').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  pending(limit: number): Promise<PayoutTable[]> {
    return this.#db.selectFrom('payouts').selectAll().where('status', '=', 'pending').orderBy('created_at').limit(limit).execute();
  }

  recent(listingIds: readonly string[], limit: number): Promise<PayoutTable[]> {
    if (listingIds.length === 0) return Promise.resolve([]);
    return this.#db.selectFrom('payouts').selectAll().where('listing_id', 'in', listingIds).orderBy('created_at', 'desc').limit(limit).execute();
  }
}
