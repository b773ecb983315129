import { type RawBuilder, sql } from 'kysely';

/** How embeddings are stored: pgvector's `vector` (indexed, HNSW) or `real[]` compared by an exact scan. */
export type VectorBackend = 'pgvector' | 'array';

/** A vector as a SQL value of the column's type. */
export function vectorValue(backend: VectorBackend, vector: readonly number[]): RawBuilder<unknown> {
  return backend === 'pgvector' ? sql`${`[${vector.join(',')}]`}::vector` : sql`${`{${vector.join(',')}}`}::real[]`;
}

/**
 * Cosine distance between the stored embedding and a query vector. With pgvector the expression casts to the fixed
 * dimension so it matches the HNSW index built on that same expression (see embedding-index.ts).
 */
export function cosineDistance(backend: VectorBackend, dimensions: number, query: readonly number[]): RawBuilder<number> {
  if (backend === 'pgvector') return sql<number>`(m.embedding::vector(${sql.raw(String(dimensions))}) <=> ${vectorValue(backend, query)})`;
  return sql<number>`memory_cosine_distance(m.embedding, ${vectorValue(backend, query)})`;
}
