import { ServiceError } from '@platform/kit/errors';
import type { Kysely } from 'kysely';
import type { ListingTable, MarketplaceSchema } from '../db/schema.ts';
import { findListing } from './listings.repository.ts';

/** The listing, if the developer owns it: 404 when unknown, 403 when someone else's. */
export async function ownedListing(db: Kysely<MarketplaceSchema>, id: string, address: string): Promise<ListingTable> {
  const row = await findListing(db, id);
  if (!row) throw new ServiceError('not_found', `no listing ${id}`);
  if (row.owner_address !== address) throw new ServiceError('forbidden', 'only the developer who created this listing may change it');
  return row;
}
