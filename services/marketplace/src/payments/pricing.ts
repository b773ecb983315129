import { ServiceError } from '@platform/kit/errors';
import { isUuid } from '@platform/kit/ids';
import { formatAmount, maxAmountMicros, parseAmount } from '@platform/kit/money';
import type { Kysely } from 'kysely';
import type { ListingTable, MarketplaceSchema } from '../db/schema.ts';
import type { ManifestOperation } from '../listings/manifest-types.ts';

// Parsed once per operation object: a cached listing serves many calls with the same objects.
const unitPrices = new WeakMap<ManifestOperation, bigint>();

/** The price of one unit of an operation, in micros. */
export function unitPriceMicros(operation: ManifestOperation): bigint {
  const known = unitPrices.get(operation);
  if (known !== undefined) return known;
  const parsed = parseAmount(operation.pricing.price_per_unit, { allowZero: true });
  if (!parsed.ok) throw new Error(`listing has a malformed price: ${operation.pricing.price_per_unit}`);
  unitPrices.set(operation, parsed.micros);
  return parsed.micros;
}

/** The most one call of the operation can cost: price × max_units. */
export function callCapMicros(operation: ManifestOperation): bigint {
  const cap = unitPriceMicros(operation) * BigInt(operation.pricing.max_units);
  return cap > maxAmountMicros ? maxAmountMicros : cap;
}

/** What `units` cost, never more than `cap`. */
export function costMicros(operation: ManifestOperation, units: bigint, cap: bigint): bigint {
  const cost = unitPriceMicros(operation) * units;
  return cost < cap ? cost : cap;
}

/** The operation of an active listing, or the error a caller should see. */
export function operationOf(listing: ListingTable, name: unknown): ManifestOperation {
  if (typeof name !== 'string' || name === '') throw new ServiceError('invalid_request', 'operation is required', { details: { field: 'operation' } });
  const operation = listing.manifest.operations.find((candidate) => candidate.name === name);
  if (!operation)
    throw new ServiceError('invalid_request', `the service has no operation "${name}"`, {
      details: { field: 'operation', operations: listing.manifest.operations.map((o) => o.name) },
    });
  return operation;
}

/** The listing a caller means to pay, active; 404 for an unknown id (malformed ones included). */
export async function activeListing(db: Kysely<MarketplaceSchema>, id: string): Promise<ListingTable> {
  const row = isUuid(id) ? await db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
  return requireActive(row);
}

/** A listing a caller may pay: active only. */
export function requireActive(listing: ListingTable | undefined): ListingTable {
  if (!listing || listing.status === 'draft' || listing.status === 'delisted') throw new ServiceError('not_found', 'service not found');
  if (listing.status !== 'active')
    throw new ServiceError('unavailable', `the service is ${listing.status}; it takes no calls now`, { retryable: true, details: { status: listing.status } });
  return listing;
}

export const money = (micros: bigint) => formatAmount(micros);
