import type { Selectable } from 'kysely';
import type { MemoriesTable } from '../db/schema.ts';

/** The columns every read returns; the search vector and embedding never leave the database. */
export const memoryColumns = [
  'id',
  'scope',
  'content',
  'kind',
  'tags',
  'key',
  'importance',
  'source_conversation_id',
  'source_intent_id',
  'created_at',
  'invalidated_at',
  'superseded_by',
  'forgotten_at',
  'forget_reason',
  'erased',
  'token_estimate',
] as const;

/** A stored memory as the reads return it (search terms and vector never leave the database). */
export type MemoryRow = Pick<Selectable<MemoriesTable>, (typeof memoryColumns)[number]>;

export type MemoryStatus = 'valid' | 'superseded' | 'forgotten' | 'erased';

/** A memory as callers see it. */
export interface MemoryView extends Pick<MemoryRow, 'id' | 'scope' | 'content' | 'kind' | 'tags' | 'key' | 'importance'> {
  source: { conversation_id: string | null; intent_id: string | null };
  created_at: string;
  /** valid: current; superseded: replaced by `superseded_by`; forgotten: hidden, kept; erased: content removed. */
  status: MemoryStatus;
  valid: boolean;
  invalidated_at: string | null;
  superseded_by: string | null;
  forgotten_at: string | null;
}

export function statusOf(row: Pick<MemoryRow, 'erased' | 'forgotten_at' | 'invalidated_at'>): MemoryStatus {
  if (row.erased) return 'erased';
  if (row.forgotten_at !== null) return 'forgotten';
  if (row.invalidated_at !== null) return 'superseded';
  return 'valid';
}

export function viewOf(row: MemoryRow): MemoryView {
  const status = statusOf(row);
  return {
    id: row.id,
    scope: row.scope,
    content: row.content,
    kind: row.kind,
    tags: row.tags,
    key: row.key,
    importance: round(row.importance, 4),
    source: { conversation_id: row.source_conversation_id, intent_id: row.source_intent_id },
    created_at: row.created_at.toISOString(),
    status,
    valid: status === 'valid',
    invalidated_at: row.invalidated_at?.toISOString() ?? null,
    superseded_by: row.superseded_by,
    forgotten_at: row.forgotten_at?.toISOString() ?? null,
  };
}

export function round(value: number, places: number): number {
  const factor = 10 ** places;
  return Math.round(value * factor) / factor;
}

/** About four characters per token, the usual rule of thumb for English with GPT-style tokenisers. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
