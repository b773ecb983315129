import { type Kysely, sql } from 'kysely';
import type { MemorySchema } from '../db/schema.ts';
import type { Embedder } from '../embeddings/embedder.ts';
import { cosineDistance, type VectorBackend } from '../embeddings/vector-column.ts';
import { filterCondition, type MemoryFilters } from './memory-filters.ts';
import { type MemoryRow, memoryColumns } from './memory-view.ts';

export interface VectorHit extends MemoryRow {
  similarity: number;
}

/** The semantic side of retrieval: the memories whose embedding (by the configured model) is nearest the query's. */
export async function vectorHits(
  db: Kysely<MemorySchema>,
  backend: VectorBackend,
  embedder: Embedder,
  query: readonly number[],
  filters: MemoryFilters,
  limit: number,
): Promise<VectorHit[]> {
  const distance = cosineDistance(backend, embedder.dimensions, query);
  const result = await sql<VectorHit>`
    select ${sql.join(memoryColumns.map((column) => sql.ref(`m.${column}`)))}, (1 - ${distance})::float8 as similarity
    from memories m
    where m.embedding is not null and m.embedding_model = ${embedder.model} and ${filterCondition(filters)}
    order by ${distance}, m.id
    limit ${limit}`.execute(db);
  return result.rows;
}
