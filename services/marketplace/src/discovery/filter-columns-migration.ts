import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/** The name to register `discoveryMigration` under in `migrations.ts` (after `0003_payments`). */
export const discoveryMigrationName = '0004_discovery';

/**
 * What discovery filters and ranks by, kept beside the manifest so a page query never reads a manifest it does
 * not show: the cheapest operation's price in micros and the confidential flag, as stored generated columns (they
 * follow every write of `manifest`, whoever makes it). Reading them from the jsonb on each query cost a manifest
 * detoast and parse per listing: at 10,000 listings that alone was most of the page's time.
 *
 * The price function is defensive: a price that is not a settlement decimal (which the manifest validator
 * refuses anyway) is skipped rather than failing the write, and a manifest without operations gives null.
 */
export const discoveryMigration: Migration = {
  async up(db) {
    await sql`
      create function marketplace_cheapest_price_micros(manifest jsonb) returns bigint
      language sql immutable parallel safe
      as $$
        select min((op -> 'pricing' ->> 'price_per_unit')::numeric * 1000000)::bigint
        from jsonb_array_elements(case when jsonb_typeof(manifest -> 'operations') = 'array' then manifest -> 'operations' else '[]'::jsonb end) as op
        where op -> 'pricing' ->> 'price_per_unit' ~ '^[0-9]{1,10}([.][0-9]{1,6})?$'
      $$`.execute(db);
    await sql`
      alter table listings
        add column cheapest_price_micros bigint generated always as (marketplace_cheapest_price_micros(manifest)) stored`.execute(db);
    await sql`
      alter table listings
        add column confidential boolean generated always as (coalesce(manifest -> 'confidential' = 'true'::jsonb, false)) stored`.execute(db);
  },
};
