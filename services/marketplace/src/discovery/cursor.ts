import { createHash } from 'node:crypto';
import { invalidRequest } from '@platform/kit/errors';
import type { MatchMode } from './text-query.ts';

/**
 * Page cursors: base64url of a small JSON object, opaque to callers.
 *
 * - The catalog is ordered by id (UUIDv7: creation order), so its cursor is the last id shown: `{c: id}`.
 * - Discovery is ordered by (score desc, id asc), with the score in integer millionths; its cursor is the last
 *   (score, id) shown, a digest of the query and filters and how the words matched: `{d, s, i, m}`. The next page is
 *   what ranks strictly after it, so nothing repeats or goes missing while the catalogue holds still. A cursor
 *   sent with another query or other filters is refused rather than silently paging a different ranking. If
 *   stats move between pages a listing may move across the boundary; keyset paging never repeats one that
 *   stayed put, which an offset would.
 */
export const maxCursorChars = 512;

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const maxScore = 1_000_000;

export interface RankedCursor {
  digest: string;
  /** The score in millionths (an integer from 0 to 10^6). */
  score: number;
  id: string;
  /** How the first page matched the query's words (most-of, or the any-of fallback): later pages keep it. */
  mode: MatchMode;
}

const encode = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

function decode(raw: string): Record<string, unknown> {
  if (raw.length === 0 || raw.length > maxCursorChars || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalidCursor();
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  throw invalidCursor();
}

export const invalidCursor = (reason = 'is not one this endpoint issued (pass next_cursor back unchanged)') =>
  invalidRequest(`cursor ${reason}`, { field: 'cursor' });

export const encodeCatalogCursor = (id: string): string => encode({ c: id });

export function decodeCatalogCursor(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const value = decode(raw);
  if (typeof value.c !== 'string' || !uuid.test(value.c) || Object.keys(value).length !== 1) throw invalidCursor();
  return value.c;
}

export const encodeRankedCursor = (cursor: RankedCursor): string => encode({ d: cursor.digest, s: cursor.score, i: cursor.id, m: cursor.mode });

export function decodeRankedCursor(raw: string | undefined, digest: string): RankedCursor | undefined {
  if (raw === undefined) return undefined;
  const value = decode(raw);
  const { d, s, i, m } = value;
  const shaped = typeof d === 'string' && typeof i === 'string' && uuid.test(i) && (m === 'most' || m === 'any') && Object.keys(value).length === 4;
  if (!shaped || !Number.isInteger(s) || (s as number) < 0 || (s as number) > maxScore) throw invalidCursor();
  if (d !== digest) throw invalidCursor('belongs to another query or other filters (start again without a cursor)');
  return { digest: d as string, score: s as number, id: i as string, mode: m as MatchMode };
}

/** What a ranked cursor is bound to: the query's lexemes and the filters, normalised. */
export function queryDigest(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}
