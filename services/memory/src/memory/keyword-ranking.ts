import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { MemorySchema } from '../db/schema.ts';
import type { Lexicon } from './lexicon.ts';
import { filterCondition, type MemoryFilters } from './memory-filters.ts';
import { type MemoryRow, memoryColumns } from './memory-view.ts';
import { type QueryTerm, tsqueryOperand } from './query-terms.ts';

export interface KeywordHit extends MemoryRow {
  keyword_score: number;
  /** Positions (1-based) in the term list of the terms this memory holds. */
  matched: number[];
}

// BM25's saturation and length normalisation, with term frequency taken as 1 (memories are a sentence or two).
const k1 = 1.2;
const b = 0.5;
/** Rows the candidate query may pull in before scoring: the rarest terms are used until their memories add up to this. */
const candidateBudget = 2_000;
const maxScoredTerms = 32;

/**
 * Everything the ranking depends on, fixed when a search starts: a cursor carries it so later pages rank by the
 * same function even after memories were stored (which moves frequencies and the mean length).
 */
export interface KeywordPlan {
  /** Stems with their weights; a memory's score sums the weights of those it holds. */
  terms: { lexeme: string; weight: number }[];
  /** Stems whose memories are scored at all. */
  candidates: string[];
  averageLength: number;
}

export function keywordPlan(terms: readonly QueryTerm[], lexicon: Lexicon): KeywordPlan {
  const scored = terms.slice(0, maxScoredTerms);
  return {
    terms: scored.map((term) => ({ lexeme: term.lexeme, weight: term.weight })),
    candidates: candidateTerms(scored, lexicon).map((term) => term.lexeme),
    averageLength: lexicon.averageLength,
  };
}

/**
 * The score as SQL: each matched term adds its weight, shorter memories (fewer distinct stems) count a little more.
 * Rounded so equal scores compare equal across pages of a cursor.
 */
function keywordScoreSql(averageLength: number, matchedSum: RawBuilder<unknown>): RawBuilder<number> {
  const lengthShare = sql`(${1 - b}::float8 + ${b}::float8 * length(m.search_vector)::float8 / ${averageLength}::float8)`;
  return sql<number>`round((${matchedSum} * ${k1 + 1}::float8 / (1 + ${k1}::float8 * ${lengthShare}))::numeric, 9)::float8`;
}

/** Which terms decide the candidates: the rarest first while their memories stay under the budget, at least one. */
function candidateTerms(terms: readonly QueryTerm[], lexicon: Lexicon): QueryTerm[] {
  const byRarity = [...terms].sort((a, c) => lexicon.documentFrequency(a.lexeme) - lexicon.documentFrequency(c.lexeme));
  const chosen: QueryTerm[] = [];
  let rows = 0;
  for (const term of byRarity) {
    const df = lexicon.documentFrequency(term.lexeme);
    if (chosen.length > 0 && rows + df > candidateBudget) break;
    chosen.push(term);
    rows += df;
  }
  return chosen;
}

/**
 * The keyword side of retrieval: memories holding any of the candidate terms, scored by every term they hold.
 * `after` continues a ranked listing (score, id) for search's cursor.
 */
export async function keywordHits(
  db: Kysely<MemorySchema>,
  plan: KeywordPlan,
  filters: MemoryFilters,
  limit: number,
  after?: { score: number; id: string },
): Promise<KeywordHit[]> {
  if (plan.terms.length === 0 || plan.candidates.length === 0) return [];
  const candidates = plan.candidates.map(tsqueryOperand).join(' | ');
  // One test per term, inlined: each `$n::tsquery` is parsed once per statement, and a row costs a few binary
  // searches in its tsvector (a lateral join over a term table cost three times as much at 100,000 memories).
  const tests = plan.terms.map((term) => sql`(m.search_vector @@ ${tsqueryOperand(term.lexeme)}::tsquery)`);
  const matchedSum = sql`(${sql.join(
    tests.map((test, index) => sql`(case when ${test} then ${plan.terms[index]?.weight ?? 0}::float8 else 0 end)`),
    sql` + `,
  )})`;
  const matched = sql<number[]>`array_remove(array[${sql.join(tests.map((test, index) => sql`case when ${test} then ${index + 1}::int end`))}], null)`;
  const score = keywordScoreSql(plan.averageLength, matchedSum);
  const continuing = after === undefined ? sql`true` : sql`(${score} < ${after.score}::float8 or (${score} = ${after.score}::float8 and m.id > ${after.id}))`;
  const result = await sql<KeywordHit>`
    select ${sql.join(memoryColumns.map((column) => sql.ref(`m.${column}`)))}, ${score} as keyword_score, ${matched} as matched
    from memories m
    where m.search_vector @@ ${candidates}::tsquery and ${filterCondition(filters)} and ${continuing}
    order by keyword_score desc, m.id
    limit ${limit}`.execute(db);
  return result.rows;
}
