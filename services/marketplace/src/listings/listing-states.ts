import type { ListingStatus } from '../db/schema.ts';

/**
 * The listing state table (the spec leaves source states open; these are ours):
 *
 * | From      | publish             | pause          | delist         |
 * |-----------|---------------------|----------------|----------------|
 * | draft     | active              | 409            | delisted       |
 * | active    | active (re-register)| paused         | delisted       |
 * | paused    | active              | paused (same)  | delisted       |
 * | delisted  | 409                 | 409            | delisted (same)|
 *
 * `delisted` is final: its id and slug stay taken and it is never listed again (create a new listing instead).
 * A move to the state a listing is already in answers 200 with the listing unchanged, so a client that retries
 * without an Idempotency-Key is safe; publishing an active listing registers it again when its manifest changed
 * since the chain last recorded it. PATCH is refused on a delisted listing.
 */
export type ListingAction = 'publish' | 'pause' | 'delist';

export type Move = { ok: true; to: ListingStatus; unchanged: boolean } | { ok: false; reason: string };

const table: Record<ListingAction, Partial<Record<ListingStatus, ListingStatus>>> = {
  publish: { draft: 'active', active: 'active', paused: 'active' },
  pause: { active: 'paused', paused: 'paused' },
  delist: { draft: 'delisted', active: 'delisted', paused: 'delisted', delisted: 'delisted' },
};

const refusals: Record<ListingAction, string> = {
  publish: 'a delisted listing cannot be published again; create a new listing',
  pause: 'only an active listing can be paused',
  delist: 'this listing cannot be delisted',
};

export function move(from: ListingStatus, action: ListingAction): Move {
  const to = table[action][from];
  if (to === undefined) return { ok: false, reason: `${refusals[action]} (it is ${from})` };
  return { ok: true, to, unchanged: to === from };
}

export const editable = (status: ListingStatus): boolean => status !== 'delisted';
