import { createHash } from 'node:crypto';
import { invalidRequest } from '@platform/kit/errors';
import { type Kysely, sql } from 'kysely';
import type { MemorySchema } from '../db/schema.ts';
import { limits } from '../limits.ts';
import { type KeywordPlan, keywordHits, keywordPlan } from './keyword-ranking.ts';
import type { Lexicon } from './lexicon.ts';
import { filterCondition, type MemoryFilters } from './memory-filters.ts';
import { type MemoryRow, type MemoryView, memoryColumns, round, viewOf } from './memory-view.ts';
import { type QueryTerm, type StemCache, termsOf } from './query-terms.ts';

export interface SearchRequest {
  filters: MemoryFilters;
  query: string | undefined;
  limit: number;
  cursor: string | undefined;
}

export interface SearchHit extends MemoryView {
  /** Keyword relevance; null when the search had no query (newest first). */
  score: number | null;
  matched_words: string[];
}

export interface SearchResult {
  memories: SearchHit[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

export interface SearchDeps {
  db: Kysely<MemorySchema>;
  textSearchConfig: string;
  lexicon: Lexicon;
  stemCache: StemCache;
}

/**
 * The cursor carries the query's terms with their weights as of the first page, so every page ranks by the same
 * function even if memories were stored meanwhile, and a digest of the filters, so it cannot be replayed against
 * another search.
 */
type Cursor =
  | { v: 1; filters: string; ranked: { plan: KeywordPlan; words: string[][]; score: number; id: string } }
  | { v: 1; filters: string; recent: { created_at: string; id: string } };

/** Keyword and filter search with pagination; superseded and forgotten memories only when asked for. */
export async function search(deps: SearchDeps, request: SearchRequest): Promise<SearchResult> {
  const digest = filtersDigest(request);
  const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, digest);
  const query = request.query?.trim() ?? '';
  if (query === '') return recentPage(deps, request, digest, cursor);
  if (cursor !== undefined && !('ranked' in cursor)) throw invalidCursor();
  let plan: KeywordPlan;
  let words: string[][];
  if (cursor === undefined) {
    const terms = await termsOf(deps.db, deps.textSearchConfig, deps.lexicon, [{ text: query, weight: 1 }], deps.stemCache);
    ({ plan, words } = planThatFitsCursor(terms, deps.lexicon, digest));
  } else ({ plan, words } = cursor.ranked);
  const after = cursor === undefined ? undefined : { score: cursor.ranked.score, id: cursor.ranked.id };
  const hits = await keywordHits(deps.db, plan, request.filters, request.limit + 1, after);
  const page = hits.slice(0, request.limit);
  const last = page.at(-1);
  const next: Cursor | undefined =
    hits.length > request.limit && last !== undefined ? { v: 1, filters: digest, ranked: { plan, words, score: last.keyword_score, id: last.id } } : undefined;
  const wordsOf = (positions: number[]) => [...new Set(positions.flatMap((position) => words[position - 1] ?? []))];
  return {
    memories: page.map((hit) => ({ ...viewOf(hit), score: round(hit.keyword_score, 6), matched_words: wordsOf(hit.matched) })),
    next_cursor: next === undefined ? null : encodeCursor(next),
  };
}

async function recentPage(deps: SearchDeps, request: SearchRequest, digest: string, cursor: Cursor | undefined): Promise<SearchResult> {
  if (cursor !== undefined && !('recent' in cursor)) throw invalidCursor();
  const after = cursor?.recent;
  const rows = await sql<MemoryRow>`
    select ${sql.join(memoryColumns.map((column) => sql.ref(`m.${column}`)))}
    from memories m
    where ${filterCondition(request.filters)}
      and ${after === undefined ? sql`true` : sql`(m.created_at, m.id) < (${new Date(after.created_at)}::timestamptz, ${after.id}::text)`}
    order by m.created_at desc, m.id desc
    limit ${request.limit + 1}`.execute(deps.db);
  const page = rows.rows.slice(0, request.limit);
  const last = page.at(-1);
  const next: Cursor | undefined =
    rows.rows.length > request.limit && last !== undefined
      ? { v: 1, filters: digest, recent: { created_at: last.created_at.toISOString(), id: last.id } }
      : undefined;
  return {
    memories: page.map((row) => ({ ...viewOf(row), score: null, matched_words: [] })),
    next_cursor: next === undefined ? null : encodeCursor(next),
  };
}

/**
 * The plan for a new ranked search, small enough that every cursor of it fits `limits.cursorChars`, or the server
 * would issue a cursor it then refuses. Only a pathological query (dozens of very long or multi-byte words) comes
 * near; its lightest terms are left out until the widest cursor the plan can produce fits.
 */
function planThatFitsCursor(terms: readonly QueryTerm[], lexicon: Lexicon, digest: string): { plan: KeywordPlan; words: string[][] } {
  for (let count = terms.length; ; count--) {
    const plan = keywordPlan(terms.slice(0, count), lexicon);
    const words = terms.slice(0, plan.terms.length).map((term) => term.words);
    const widest: Cursor = { v: 1, filters: digest, ranked: { plan, words, score: -Number.MAX_VALUE, id: widestId } };
    if (count <= 1 || encodeCursor(widest).length <= limits.cursorChars) return { plan, words };
  }
}

const widestId = '00000000-0000-0000-0000-000000000000';

function filtersDigest(request: SearchRequest): string {
  const { filters } = request;
  const shape = [
    filters.owner,
    filters.scope,
    [...(filters.kinds ?? [])].sort(),
    [...(filters.tags ?? [])].sort(),
    filters.createdAfter?.toISOString() ?? null,
    filters.createdBefore?.toISOString() ?? null,
    filters.includeSuperseded,
    filters.includeForgotten,
    request.query?.trim() ?? '',
  ];
  return createHash('sha256').update(JSON.stringify(shape)).digest('base64url').slice(0, 16);
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function invalidCursor() {
  return invalidRequest('cursor is not one this server issued for this search (same query and filters); start again without a cursor', {
    field: 'cursor',
  });
}

function decodeCursor(raw: string, digest: string): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!isCursor(parsed) || parsed.filters !== digest) throw invalidCursor();
  return parsed;
}

function isCursor(value: unknown): value is Cursor {
  if (typeof value !== 'object' || value === null) return false;
  const cursor = value as Record<string, unknown>;
  if (cursor.v !== 1 || typeof cursor.filters !== 'string') return false;
  const ranked = cursor.ranked as Record<string, unknown> | undefined;
  if (ranked !== undefined) return typeof ranked.score === 'number' && typeof ranked.id === 'string' && isPlan(ranked.plan) && isWordLists(ranked.words);
  const recent = cursor.recent as Record<string, unknown> | undefined;
  return recent !== undefined && typeof recent.id === 'string' && typeof recent.created_at === 'string' && !Number.isNaN(Date.parse(recent.created_at));
}

// PostgreSQL indexes no word longer than 2047 bytes, so no stem or query word in a plan the server made is longer.
const isShortText = (value: unknown) => typeof value === 'string' && value.length <= 2_047;

function isPlan(value: unknown): value is KeywordPlan {
  if (typeof value !== 'object' || value === null) return false;
  const plan = value as Record<string, unknown>;
  return (
    typeof plan.averageLength === 'number' &&
    plan.averageLength > 0 &&
    Array.isArray(plan.candidates) &&
    plan.candidates.length <= 64 &&
    plan.candidates.every(isShortText) &&
    Array.isArray(plan.terms) &&
    plan.terms.length <= 64 &&
    plan.terms.every(
      (term: { lexeme?: unknown; weight?: unknown }) => isShortText(term?.lexeme) && typeof term.weight === 'number' && Number.isFinite(term.weight),
    )
  );
}

function isWordLists(value: unknown): value is string[][] {
  return Array.isArray(value) && value.length <= 64 && value.every((words) => Array.isArray(words) && words.length <= 64 && words.every(isShortText));
}
