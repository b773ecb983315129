import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { isUuid, uuidv7 } from '@platform/kit/ids';
import type { Kysely } from 'kysely';
import type { Hex, PrivateKeyAccount } from 'viem';
import type { ListingTable, MarketplaceSchema, QuoteTable } from '../db/schema.ts';
import type { ManifestOperation } from '../listings/manifest-types.ts';
import { marketplaceDomain, signQuote, uuidBytes32 } from './eip712.ts';
import { money, unitPriceMicros } from './pricing.ts';

/** A signed quote as callers get it. */
export interface QuoteView {
  quote_id: string;
  service_id: string;
  operation: string;
  caller: string;
  unit_price_settle: string;
  estimated_units: string;
  max_total_settle: string;
  pricing_version: number;
  expires_at: string;
  signer: string;
  domain: ReturnType<typeof marketplaceDomain>;
  digest: string;
  signature: string;
}

/**
 * Quotes: the price of a call fixed for a while and signed (EIP-712) by the marketplace. `max_total_settle` =
 * unit price × estimated units (at most the operation's max_units) is the cap a call under this quote can cost.
 */
export class Quotes {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #clock: Clock;
  readonly #signer: PrivateKeyAccount;
  readonly #chainId: number;
  readonly #ttlSeconds: number;

  constructor(options: { db: Kysely<MarketplaceSchema>; clock: Clock; signer: PrivateKeyAccount; chainId: number; ttlSeconds: number }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#signer = options.signer;
    this.#chainId = options.chainId;
    this.#ttlSeconds = options.ttlSeconds;
  }

  async create(listing: ListingTable, operation: ManifestOperation, caller: string, estimatedUnits: bigint): Promise<QuoteView> {
    if (estimatedUnits < 1n || estimatedUnits > BigInt(operation.pricing.max_units))
      throw new ServiceError('invalid_request', `estimated_units must be from 1 to ${operation.pricing.max_units}`, { details: { field: 'estimated_units' } });
    const now = this.#clock.now();
    const id = uuidv7(now.getTime());
    const unitPrice = unitPriceMicros(operation);
    const expiresAt = new Date(Math.floor(now.getTime() / 1000) * 1000 + this.#ttlSeconds * 1000);
    const message = {
      quoteId: uuidBytes32(id),
      serviceId: uuidBytes32(listing.id),
      operation: operation.name,
      caller,
      unitPrice,
      estimatedUnits,
      maxTotal: unitPrice * estimatedUnits,
      pricingVersion: BigInt(listing.pricing_version),
      expiresAt: BigInt(expiresAt.getTime() / 1000),
    };
    const signed = await signQuote(this.#signer, this.#chainId, message);
    const row: QuoteTable = {
      id,
      listing_id: listing.id,
      operation: operation.name,
      caller_did: caller,
      unit_price_micros: unitPrice,
      estimated_units: estimatedUnits,
      max_total_micros: message.maxTotal,
      pricing_version: listing.pricing_version,
      expires_at: expiresAt,
      digest: signed.digest,
      signature: signed.signature,
      created_at: now,
    };
    await this.#db.insertInto('quotes').values(row).execute();
    return this.view(row);
  }

  /** The caller's quote for this listing and operation, still valid; otherwise the error the caller should see. */
  async forCall(id: string, listing: ListingTable, operation: string, caller: string): Promise<QuoteTable> {
    const quote = isUuid(id) ? await this.#db.selectFrom('quotes').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
    if (!quote || quote.caller_did !== caller) throw new ServiceError('not_found', 'quote not found', { details: { quote_id: id } });
    if (quote.listing_id !== listing.id || quote.operation !== operation)
      throw new ServiceError('invalid_request', 'the quote is for another service or operation', { details: { quote_id: id } });
    if (quote.expires_at.getTime() <= this.#clock.now().getTime())
      throw new ServiceError('quote_expired', `quote ${id} expired at ${quote.expires_at.toISOString()}; ask for a new one`, {
        details: { quote_id: id, expires_at: quote.expires_at.toISOString() },
      });
    if (quote.pricing_version !== listing.pricing_version)
      throw new ServiceError('conflict', 'the service’s pricing changed since this quote; ask for a new one', {
        details: { reason: 'quote_stale', quote_id: id, pricing_version: listing.pricing_version },
      });
    return quote;
  }

  view(row: QuoteTable): QuoteView {
    return {
      quote_id: row.id,
      service_id: row.listing_id,
      operation: row.operation,
      caller: row.caller_did,
      unit_price_settle: money(row.unit_price_micros),
      estimated_units: row.estimated_units.toString(),
      max_total_settle: money(row.max_total_micros),
      pricing_version: row.pricing_version,
      expires_at: row.expires_at.toISOString(),
      signer: this.#signer.address,
      domain: marketplaceDomain(this.#chainId),
      digest: row.digest as Hex,
      signature: row.signature,
    };
  }
}
