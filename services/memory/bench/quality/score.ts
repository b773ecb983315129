import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/* Retrieval-quality set: memories an agent keeps about its user, and the recall queries it would issue. */

export interface QualityMemory {
  ref: string;
  scope: string;
  content: string;
  kind: 'fact' | 'preference' | 'event' | 'note' | 'procedure';
  tags: string[];
  importance: number;
  days_ago: number;
  /** Refs of earlier memories (same scope) that this one replaces. */
  supersedes?: string[];
}

export interface QualityQuery {
  id: string;
  scope: string;
  query: string;
  /** Refs a good system must return, none of them superseded. */
  expected: string[];
  /** Only for category "updated": superseded refs that must not come back. */
  stale?: string[];
  category: string;
}

export interface CategoryScore {
  recallAt5: number;
  mrr: number;
  queries: number;
}

export interface QualityScore extends CategoryScore {
  /** Fraction of "updated" queries whose top k holds a stale ref. */
  staleAt5: number;
  byCategory: Record<string, CategoryScore>;
}

export function loadQualitySet(): { memories: QualityMemory[]; queries: QualityQuery[] } {
  const read = (file: string): unknown => JSON.parse(readFileSync(join(import.meta.dirname, file), 'utf8'));
  // The shape is checked by validate-dataset.ts, not here.
  return { memories: read('memories.json') as QualityMemory[], queries: read('queries.json') as QualityQuery[] };
}

interface PerQuery {
  category: string;
  recall: number;
  reciprocalRank: number;
  staleHit: boolean | undefined;
}

function scoreOne(query: QualityQuery, ranking: string[], k: number): PerQuery {
  const top = new Set(ranking.slice(0, k));
  const found = query.expected.filter((ref) => top.has(ref)).length;
  const expected = new Set(query.expected);
  const firstHit = ranking.findIndex((ref) => expected.has(ref));
  return {
    category: query.category,
    recall: query.expected.length === 0 ? 0 : found / query.expected.length,
    reciprocalRank: firstHit < 0 ? 0 : 1 / (firstHit + 1),
    staleHit: query.category === 'updated' ? (query.stale ?? []).some((ref) => top.has(ref)) : undefined,
  };
}

const mean = (values: number[]): number => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

function summarize(rows: PerQuery[]): CategoryScore {
  return { recallAt5: mean(rows.map((r) => r.recall)), mrr: mean(rows.map((r) => r.reciprocalRank)), queries: rows.length };
}

/** `rankings` maps query id to refs, best first; a missing ranking counts as empty. */
export function scoreRankings(queries: QualityQuery[], rankings: Map<string, string[]>, k = 5): QualityScore {
  const rows = queries.map((q) => scoreOne(q, rankings.get(q.id) ?? [], k));
  const byCategory: Record<string, CategoryScore> = {};
  for (const category of new Set(rows.map((r) => r.category))) {
    byCategory[category] = summarize(rows.filter((r) => r.category === category));
  }
  const updated = rows.filter((r) => r.staleHit !== undefined);
  return { ...summarize(rows), staleAt5: mean(updated.map((r) => (r.staleHit ? 1 : 0))), byCategory };
}
