import type { Clock } from '@platform/kit/clock';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MemorySchema } from '../db/schema.ts';
import type { Embedder } from '../embeddings/embedder.ts';
import type { VectorBackend } from '../embeddings/vector-column.ts';
import { type KeywordHit, keywordHits, keywordPlan } from './keyword-ranking.ts';
import type { Lexicon } from './lexicon.ts';
import type { MemoryFilters } from './memory-filters.ts';
import { type MemoryRow, type MemoryView, round, viewOf } from './memory-view.ts';
import { type QueryTerm, type QueryText, type StemCache, termsOf } from './query-terms.ts';
import { type VectorHit, vectorHits } from './vector-ranking.ts';

export interface RecallRequest {
  filters: MemoryFilters;
  texts: QueryText[];
  maxTokens: number;
  limit: number;
}

/** Why a memory came back, in numbers an agent (or its developer) can read. */
export interface MatchReason {
  /** Query words found in the memory (by stem, so "booked" matches "booking"). */
  matched_words: string[];
  /** Query words that matched only as a near spelling, with the stem they matched. */
  near_spellings: { word: string; matched: string }[];
  keyword_rank: number | null;
  semantic_rank: number | null;
  similarity: number | null;
  recency: number;
  importance: number;
  summary: string;
}

export interface RecalledMemory extends MemoryView {
  score: number;
  why: MatchReason;
}

export interface RecallResult {
  memories: RecalledMemory[];
  tokens_used: number;
  max_tokens: number;
  /** Relevant memories left out because they did not fit the budget or the limit. */
  omitted: number;
  /** Which retrieval channels answered: keyword always, semantic when embeddings are configured and reachable. */
  channels: ('keyword' | 'semantic')[];
}

export interface RecallDeps {
  db: Kysely<MemorySchema>;
  clock: Clock;
  textSearchConfig: string;
  lexicon: Lexicon;
  stemCache: StemCache;
  vectors: VectorBackend;
  embedder: Embedder | undefined;
  recencyHalfLifeDays: number;
  logger: Logger;
}

const rrfK = 60;
/**
 * With keywords alone, a memory scoring under this share of the best one matched only common words of the query
 * ("user", "like"); it is dropped rather than spent on the token budget.
 */
const keywordFloor = 0.15;
/**
 * A memory found only by meaning must be at least this share as similar as the most similar one: the vector index
 * returns its nearest neighbours however far they are, and an unrelated memory is not worth the budget.
 */
const semanticFloor = 0.6;
// Boosts are gentle: they reorder memories of similar relevance, they do not lift an unrelated one over a match.
const importanceBoost = 0.2;
const recencyBoost = 0.1;
/** Per memory, on top of its content: id, kind, date and score as the agent will see them. */
const entryOverheadTokens = 12;
const dayMs = 86_400_000;

/**
 * Recall: the most relevant valid memories for a query or a conversation, fused from keyword ranking and (when
 * configured) vector similarity by reciprocal-rank fusion, nudged by importance and recency, and packed greedily
 * into the token budget in score order.
 */
export async function recall(deps: RecallDeps, request: RecallRequest): Promise<RecallResult> {
  const pool = Math.max(50, request.limit * 5);
  const terms = await termsOf(deps.db, deps.textSearchConfig, deps.lexicon, request.texts, deps.stemCache);
  const [keyword, semantic] = await Promise.all([
    keywordHits(deps.db, keywordPlan(terms, deps.lexicon), request.filters, pool),
    semanticHits(deps, request, pool),
  ]);
  const channels: RecallResult['channels'] = semantic === undefined ? ['keyword'] : ['keyword', 'semantic'];
  const ranked = fuse(deps, terms, keyword, semantic ?? []);
  const memories: RecalledMemory[] = [];
  let used = 0;
  let omitted = 0;
  for (const entry of ranked) {
    const cost = entry.row.token_estimate + entryOverheadTokens;
    if (memories.length >= request.limit || used + cost > request.maxTokens) {
      omitted++;
      continue;
    }
    used += cost;
    memories.push({ ...viewOf(entry.row), score: round(entry.score, 6), why: entry.why });
  }
  return { memories, tokens_used: used, max_tokens: request.maxTokens, omitted, channels };
}

async function semanticHits(deps: RecallDeps, request: RecallRequest, pool: number): Promise<VectorHit[] | undefined> {
  if (deps.embedder === undefined) return undefined;
  // The newest text first: it is what the agent is answering now.
  const text = [...request.texts]
    .reverse()
    .map((part) => part.text)
    .join('\n');
  try {
    const [vector] = await deps.embedder.embed([text]);
    if (vector === undefined) return undefined;
    return await vectorHits(deps.db, deps.vectors, deps.embedder, vector, request.filters, pool);
  } catch (error) {
    deps.logger.warn({ err: error }, 'semantic recall unavailable; answering from keywords alone');
    return undefined;
  }
}

interface Candidate {
  row: MemoryRow;
  keyword?: { rank: number; hit: KeywordHit };
  semantic?: { rank: number; hit: VectorHit };
}

function fuse(deps: RecallDeps, terms: readonly QueryTerm[], keyword: readonly KeywordHit[], semantic: readonly VectorHit[]) {
  const candidates = new Map<string, Candidate>();
  for (const [index, hit] of keyword.entries()) candidates.set(hit.id, { row: hit, keyword: { rank: index + 1, hit } });
  for (const [index, hit] of semantic.entries()) {
    const existing = candidates.get(hit.id);
    if (existing === undefined) candidates.set(hit.id, { row: hit, semantic: { rank: index + 1, hit } });
    else existing.semantic = { rank: index + 1, hit };
  }
  const bothChannels = semantic.length > 0;
  const topKeyword = keyword[0]?.keyword_score ?? 0;
  const now = deps.clock.now().getTime();
  const scored = [...candidates.values()].map((candidate) => {
    // One channel: its own score, scaled to the best hit. Two: reciprocal-rank fusion, scaled to its maximum.
    const relevance = bothChannels
      ? ((candidate.keyword ? 1 / (rrfK + candidate.keyword.rank) : 0) + (candidate.semantic ? 1 / (rrfK + candidate.semantic.rank) : 0)) / (2 / (rrfK + 1))
      : topKeyword > 0 && candidate.keyword
        ? candidate.keyword.hit.keyword_score / topKeyword
        : 0;
    const ageDays = Math.max(0, (now - candidate.row.created_at.getTime()) / dayMs);
    const recency = 0.5 ** (ageDays / deps.recencyHalfLifeDays);
    const score = relevance * (1 + importanceBoost * (candidate.row.importance - 0.5)) * (1 + recencyBoost * recency);
    return {
      row: candidate.row,
      score,
      relevance,
      hasKeyword: candidate.keyword !== undefined,
      similarity: candidate.semantic?.hit.similarity ?? 0,
      why: reasonFor(terms, candidate, recency),
    };
  });
  const topSimilarity = semantic[0]?.similarity ?? 0;
  const kept = scored.filter((entry) =>
    bothChannels ? entry.hasKeyword || entry.similarity >= semanticFloor * topSimilarity : entry.relevance >= keywordFloor,
  );
  return kept.sort((a, b) => b.score - a.score || (a.row.id < b.row.id ? -1 : 1));
}

function reasonFor(terms: readonly QueryTerm[], candidate: Candidate, recency: number): MatchReason {
  const matchedTerms = (candidate.keyword?.hit.matched ?? []).map((position) => terms[position - 1]).filter((term) => term !== undefined);
  const matchedWords = [...new Set(matchedTerms.filter((term) => !term.corrected).flatMap((term) => term.words))];
  const nearSpellings = matchedTerms.filter((term) => term.corrected).flatMap((term) => term.words.map((word) => ({ word, matched: term.lexeme })));
  const similarity = candidate.semantic ? round(candidate.semantic.hit.similarity, 4) : null;
  const parts: string[] = [];
  if (matchedWords.length > 0) parts.push(`matches ${matchedWords.map((word) => `"${word}"`).join(', ')}`);
  if (nearSpellings.length > 0) parts.push(`near spelling of ${nearSpellings.map((near) => `"${near.word}"`).join(', ')}`);
  if (similarity !== null) parts.push(`semantic similarity ${similarity}`);
  return {
    matched_words: matchedWords,
    near_spellings: nearSpellings,
    keyword_rank: candidate.keyword?.rank ?? null,
    semantic_rank: candidate.semantic?.rank ?? null,
    similarity,
    recency: round(recency, 4),
    importance: round(candidate.row.importance, 4),
    summary: parts.join('; ') || 'related by meaning',
  };
}
