import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { MarketplaceSchema } from '../db/schema.ts';
import { type CatalogItem, catalogItem } from '../listings/listing-view.ts';
import type { Manifest } from '../listings/manifest-types.ts';
import { decodeCatalogCursor, decodeRankedCursor, encodeCatalogCursor, encodeRankedCursor, queryDigest, type RankedCursor } from './cursor.ts';
import type { DiscoveryFilters } from './inputs.ts';
import {
  browseScoreSql,
  formatScore,
  priceSql,
  qualitySql,
  qualityThousandthsSql,
  reliabilitySql,
  roundedScore,
  searchScoreSql,
  uptimeBpsSql,
} from './ranking.ts';
import { anyOf, type MatchMode, matchQuery, queryLexemes, queryWords, requiredMatches } from './text-query.ts';

/** The spec's discovery result item: a catalog entry and its blended `score`. */
export interface DiscoveryItem extends CatalogItem {
  score: string;
}

export interface Page<T> {
  results: T[];
  next_cursor: string | null;
}

interface Row {
  id: string;
  slug: string;
  display_name: string;
  summary: string;
  kind: string;
  manifest: Manifest | string;
  quality: number;
  uptime_bps: number | null;
}

type Db = Kysely<MarketplaceSchema>;

function item(row: Row): CatalogItem {
  const manifest = (typeof row.manifest === 'string' ? JSON.parse(row.manifest) : row.manifest) as Manifest;
  return catalogItem({ ...row, manifest }, { quality: Number(row.quality), uptimeBps: row.uptime_bps === null ? null : Number(row.uptime_bps) });
}

/** Only active listings are discoverable: drafts are unfinished, paused and delisted ones do not take calls. */
const discoverable = sql`l.status = 'active'`;

/** `GET /v1/catalog`: active listings in creation order (UUIDv7 ids), keyset-paged on the (status, id) index. */
export async function catalogPage(db: Db, request: { limit: number; cursor: string | undefined }): Promise<Page<CatalogItem>> {
  const after = decodeCatalogCursor(request.cursor);
  const { rows } = await sql<Row>`
    select l.id, l.slug, l.display_name, l.summary, l.kind, l.manifest, ${qualitySql} as quality, ${uptimeBpsSql}::int as uptime_bps
    from listings l left join listing_stats s on s.listing_id = l.id
    where ${discoverable} ${after === undefined ? sql`` : sql`and l.id > ${after}::uuid`}
    order by l.id
    limit ${request.limit + 1}`.execute(db);
  const results = rows.slice(0, request.limit).map(item);
  const last = results.at(-1);
  return { results, next_cursor: rows.length > request.limit && last ? encodeCatalogCursor(last.id) : null };
}

export interface DiscoverRequest {
  query: string;
  filters: DiscoveryFilters;
  limit: number;
  cursor: string | undefined;
}

function filterSql(filters: DiscoveryFilters): RawBuilder<unknown>[] {
  const where: RawBuilder<unknown>[] = [];
  if (filters.kind !== undefined) where.push(sql`l.kind = ${filters.kind}`);
  if (filters.maxPriceMicros !== undefined) where.push(sql`l.cheapest_price_micros <= ${filters.maxPriceMicros.toString()}::bigint`);
  if (filters.confidential !== undefined) where.push(sql`l.confidential = ${filters.confidential}`);
  if (filters.minQualityThousandths !== undefined) where.push(sql`${qualityThousandthsSql} >= ${filters.minQualityThousandths}`);
  // A listing never called has no uptime: it does not pass an uptime floor, whatever the floor.
  if (filters.minUptimeBps !== undefined) where.push(sql`${uptimeBpsSql} >= ${filters.minUptimeBps}`);
  return where;
}

/**
 * `GET`/`POST /v1/discover`: the filtered active listings, ranked by `ranking.ts`. One statement per page: the
 * inner query filters and computes each term over narrow columns (the manifest is not read), the middle one
 * blends and rounds the score and cuts the page, and only the page's rows are joined back for their manifests.
 */
export async function discoverPage(db: Db, request: DiscoverRequest): Promise<Page<DiscoveryItem>> {
  const lexemes = await queryLexemes(db, queryWords(request.query));
  const { filters } = request;
  const digest = queryDigest([
    lexemes,
    filters.kind,
    filters.maxPriceMicros?.toString(),
    filters.minQualityThousandths,
    filters.minUptimeBps,
    filters.confidential,
  ]);
  const after = decodeRankedCursor(request.cursor, digest);
  if (lexemes.length === 0) return rankedPage(db, request, { digest, after, text: undefined });
  const mode: MatchMode = after?.mode ?? 'most';
  const page = await rankedPage(db, request, { digest, after, text: { lexemes, mode } });
  // Most-of matched nothing at all (not a later page running dry): any-of, so one mistyped word is forgiven.
  if (page.results.length === 0 && after === undefined && requiredMatches(lexemes.length) > 1)
    return rankedPage(db, request, { digest, after, text: { lexemes, mode: 'any' } });
  return page;
}

interface RankedPlan {
  digest: string;
  after: RankedCursor | undefined;
  text: { lexemes: string[]; mode: MatchMode } | undefined;
}

async function rankedPage(db: Db, request: DiscoverRequest, plan: RankedPlan): Promise<Page<DiscoveryItem>> {
  const { after, text } = plan;
  const where = [discoverable, ...filterSql(request.filters)];
  if (text) where.push(sql`l.search @@ ${matchQuery(text.lexemes, text.mode)}::tsquery`);
  const rank = text ? sql`ts_rank(l.search, ${anyOf(text.lexemes)}::tsquery)` : sql`0::real`;
  const { rows } = await sql<Row & { score: number }>`
    with ranked as (
      select r.id, r.quality, r.uptime_bps, ${roundedScore(text ? searchScoreSql : browseScoreSql)} as score
      from (
        select l.id, ${qualitySql} as quality, ${reliabilitySql} as reliability, ${priceSql} as price, ${uptimeBpsSql}::int as uptime_bps,
          ${rank} as text_rank, ${text ? sql`max(${rank}) over ()` : sql`0::real`} as best_text
        from listings l left join listing_stats s on s.listing_id = l.id
        where ${sql.join(where, sql` and `)}
      ) r
    ), page as (
      select * from ranked
      ${after === undefined ? sql`` : sql`where score < ${after.score}::float8 or (score = ${after.score}::float8 and id > ${after.id}::uuid)`}
      order by score desc, id
      limit ${request.limit + 1}
    )
    select l.id, l.slug, l.display_name, l.summary, l.kind, l.manifest, p.quality, p.uptime_bps, p.score
    from page p join listings l on l.id = p.id
    order by p.score desc, p.id`.execute(db);
  const page = rows.slice(0, request.limit);
  const results = page.map((row) => ({ ...item(row), score: formatScore(Number(row.score)) }));
  const last = page.at(-1);
  const more = rows.length > request.limit && last !== undefined;
  const next = more ? encodeRankedCursor({ digest: plan.digest, score: Number(last.score), id: last.id, mode: text?.mode ?? 'most' }) : null;
  return { results, next_cursor: next };
}
