import type { Clock } from '@platform/kit/clock';
import type { Kysely, Updateable } from 'kysely';
import type { ListingStatus, ListingTable, MarketplaceSchema } from '../db/schema.ts';
import { type Manifest, manifestHash, searchDocumentOf } from './manifest-types.ts';

type Db = Kysely<MarketplaceSchema>;

/** The columns that follow from a manifest: written together whenever the manifest is. */
export function manifestColumns(manifest: Manifest) {
  return {
    manifest: JSON.stringify(manifest) as unknown as Manifest,
    manifest_hash: manifestHash(manifest),
    display_name: manifest.display_name,
    summary: manifest.summary,
    kind: manifest.kind,
    search_document: searchDocumentOf(manifest),
  };
}

/** Inserts a draft; undefined when the slug is taken. */
export async function insertDraft(
  db: Db,
  clock: Clock,
  draft: { id: string; slug: string; owner: string; payoutDid: string | null; manifest: Manifest },
): Promise<string | undefined> {
  const row = await db
    .insertInto('listings')
    .values({
      id: draft.id,
      slug: draft.slug,
      owner_address: draft.owner,
      payout_did: draft.payoutDid,
      status: 'draft',
      ...manifestColumns(draft.manifest),
      pricing_version: 1,
      registry_status: 'none',
      registry_tx_hash: null,
      registry_block: null,
      registry_manifest_hash: null,
      created_at: clock.sqlNow(),
      updated_at: clock.sqlNow(),
      published_at: null,
    })
    .onConflict((conflict) => conflict.column('slug').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export async function findListing(db: Db, id: string): Promise<ListingTable | undefined> {
  return (await db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst()) as ListingTable | undefined;
}

export async function slugTaken(db: Db, slug: string): Promise<boolean> {
  return (await db.selectFrom('listings').select('id').where('slug', '=', slug).executeTakeFirst()) !== undefined;
}

/**
 * Updates a listing only if it is still in `expected` state and still has the manifest hash the caller decided on,
 * so a concurrent change makes the write miss (false) instead of overwriting it.
 */
export async function updateListingIf(
  db: Db,
  clock: Clock,
  id: string,
  expected: { status: ListingStatus; manifestHash?: string },
  changes: Updateable<ListingTable>,
): Promise<boolean> {
  let query = db
    .updateTable('listings')
    .set({ ...changes, updated_at: clock.sqlNow() })
    .where('id', '=', id)
    .where('status', '=', expected.status);
  if (expected.manifestHash !== undefined) query = query.where('manifest_hash', '=', expected.manifestHash);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Registry bookkeeping; it never changes the listing's status, so it needs no state guard. */
export async function setRegistry(
  db: Db,
  id: string,
  changes: Pick<Updateable<ListingTable>, 'registry_status' | 'registry_tx_hash' | 'registry_block' | 'registry_manifest_hash'>,
): Promise<void> {
  await db.updateTable('listings').set(changes).where('id', '=', id).execute();
}
