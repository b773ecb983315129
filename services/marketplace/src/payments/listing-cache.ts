import type { Kysely } from 'kysely';
import type { ListingTable, MarketplaceSchema } from '../db/schema.ts';
import { activeListing } from './pricing.ts';

/** How long a listing read for a call is reused: a change made on another instance is seen within this. */
const freshForMs = 1000;

/**
 * The listings calls are paid for, kept a second: reading the listing was a database round trip on every call
 * (two, before), the largest share of the voucher rail's cost after the calls themselves. Writes on this
 * instance (PATCH, pause, delist) forget their listing at once; another instance's are seen within a second.
 */
export class ListingCache {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #entries = new Map<string, { listing: ListingTable; at: number }>();
  /** Bumped by every forget: a read that started before one is not kept (it may hold the row from before the change). */
  #generation = 0;

  constructor(db: Kysely<MarketplaceSchema>) {
    this.#db = db;
  }

  /** The active listing, or the error a caller should see (404 unknown, 503 paused). */
  async active(id: string): Promise<ListingTable> {
    const entry = this.#entries.get(id);
    const now = performance.now();
    if (entry && now - entry.at < freshForMs) return entry.listing;
    const generation = this.#generation;
    const listing = await activeListing(this.#db, id);
    if (generation !== this.#generation) return listing;
    if (this.#entries.size >= 10_000) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(id, { listing, at: now });
    return listing;
  }

  forget(id: string): void {
    this.#generation += 1;
    this.#entries.delete(id);
  }
}
