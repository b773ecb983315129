import type { Kysely } from 'kysely';
import type { ListingStatsTable, ListingTable, MarketplaceSchema } from '../db/schema.ts';
import type { Manifest } from './manifest-types.ts';
import { formatQuality, measure } from './quality.ts';

/** One operation as listings and discovery results show it. */
export interface OperationView {
  name: string;
  description: string;
  unit: string;
  price_per_unit: string;
  max_units: number;
}

/** A catalog entry: the listing's public summary (the manifest is at `GET /v1/services/{id}`). */
export interface CatalogItem {
  id: string;
  slug: string;
  display_name: string;
  summary: string;
  kind: string;
  quality_score: string;
  uptime_bps: number | null;
  operations: OperationView[];
}

/** A listing as every route shows it: the spec's fields, then who owns it and where the registry stands. */
export interface ListingView extends CatalogItem {
  manifest: Manifest;
  status: ListingTable['status'];
  owner_address: string;
  payout_did: string | null;
  pricing_version: number;
  manifest_hash: string;
  registry: { status: ListingTable['registry_status']; tx_hash: string | null; block: string | null; manifest_hash: string | null };
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

export function operationViews(manifest: Manifest): OperationView[] {
  return manifest.operations.map((operation) => ({
    name: operation.name,
    description: operation.description,
    unit: operation.pricing.unit,
    price_per_unit: operation.pricing.price_per_unit,
    max_units: operation.pricing.max_units,
  }));
}

/** The catalog's fields of a listing, from its row and its measured quality and uptime. */
export function catalogItem(
  row: Pick<ListingTable, 'id' | 'slug' | 'display_name' | 'summary' | 'kind' | 'manifest'>,
  measured: { quality: number; uptimeBps: number | null },
): CatalogItem {
  return {
    id: row.id,
    slug: row.slug,
    display_name: row.display_name,
    summary: row.summary,
    kind: row.kind,
    quality_score: formatQuality(measured.quality),
    uptime_bps: measured.uptimeBps,
    operations: operationViews(row.manifest),
  };
}

export function listingView(row: ListingTable, stats: ListingStatsTable | undefined): ListingView {
  return {
    ...catalogItem(row, measure(stats)),
    manifest: row.manifest,
    status: row.status,
    owner_address: row.owner_address,
    payout_did: row.payout_did,
    pricing_version: row.pricing_version,
    manifest_hash: row.manifest_hash,
    registry: {
      status: row.registry_status,
      tx_hash: row.registry_tx_hash,
      block: row.registry_block === null ? null : row.registry_block.toString(),
      manifest_hash: row.registry_manifest_hash,
    },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    published_at: row.published_at?.toISOString() ?? null,
  };
}

/** A listing and its measured stats by id, or undefined. */
export async function loadListingView(db: Kysely<MarketplaceSchema>, id: string): Promise<ListingView | undefined> {
  const row = await db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const stats = await db.selectFrom('listing_stats').selectAll().where('listing_id', '=', id).executeTakeFirst();
  return listingView(row as ListingTable, stats as ListingStatsTable | undefined);
}
