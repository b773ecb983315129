import type { ColumnType } from 'kysely';

export type MemoryKind = 'fact' | 'preference' | 'event' | 'note' | 'procedure';
export const memoryKinds: readonly MemoryKind[] = ['fact', 'preference', 'event', 'note', 'procedure'];

export interface MemoriesTable {
  id: string;
  /** Whose memory it is: from the verified bearer only (`src/owners.ts`). */
  owner: string;
  scope: string;
  content: string | null;
  kind: MemoryKind;
  tags: string[];
  key: string | null;
  importance: number;
  source_conversation_id: string | null;
  source_intent_id: string | null;
  created_at: ColumnType<Date, Date | string, Date | string>;
  invalidated_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  superseded_by: string | null;
  forgotten_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  forget_reason: string | null;
  erased: boolean;
  fingerprint: string | null;
  /** Written through SQL (to_tsvector); read back only as lexeme arrays. */
  search_vector: unknown;
  token_estimate: number;
  /** pgvector `vector` or `real[]`, written through SQL casts. */
  embedding: unknown;
  embedding_model: string | null;
}

export interface MemorySettingsTable {
  name: string;
  value: string;
}

export interface MemorySchema {
  memories: MemoriesTable;
  memory_settings: MemorySettingsTable;
}
