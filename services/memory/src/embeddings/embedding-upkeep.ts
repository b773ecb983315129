import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { MemorySchema } from '../db/schema.ts';
import type { Embedder } from './embedder.ts';
import { type VectorBackend, vectorValue } from './vector-column.ts';

const indexPrefix = 'memories_embedding_hnsw_';

/**
 * Makes the stored vectors agree with the configured model before serving: vectors from another model (or
 * length) are dropped so the backfill embeds those memories again, and with pgvector the HNSW index is built for
 * this length (an index for another length would refuse every new row).
 */
export async function prepareEmbeddings(db: Kysely<MemorySchema>, backend: VectorBackend, embedder: Embedder): Promise<void> {
  await sql`update memories set embedding = null, embedding_model = null where embedding is not null and embedding_model is distinct from ${embedder.model}`.execute(
    db,
  );
  if (backend !== 'pgvector') return;
  const dimensions = String(embedder.dimensions);
  await sql`update memories set embedding = null, embedding_model = null where embedding is not null and vector_dims(embedding) <> ${embedder.dimensions}`.execute(
    db,
  );
  const existing = await sql<{ name: string }>`
    select indexname as name from pg_indexes where tablename = 'memories' and indexname like ${`${indexPrefix}%`} and schemaname = current_schema()`.execute(
    db,
  );
  for (const { name } of existing.rows) if (name !== `${indexPrefix}${dimensions}`) await sql`drop index if exists ${sql.id(name)}`.execute(db);
  // The dimension is a validated integer from the settings; DDL cannot take it as a parameter.
  await sql`create index if not exists ${sql.id(`${indexPrefix}${dimensions}`)} on memories using hnsw ((embedding::vector(${sql.raw(dimensions)})) vector_cosine_ops)`.execute(
    db,
  );
}

/** Embeds memories stored while the embedding endpoint was down (or before embeddings were configured), a batch at a time. */
export async function backfillEmbeddings(db: Kysely<MemorySchema>, backend: VectorBackend, embedder: Embedder, logger: Logger, batch = 64): Promise<number> {
  let done = 0;
  for (;;) {
    const pending = await db
      .selectFrom('memories')
      .select(['id', 'content'])
      .where('embedding', 'is', null)
      .where('content', 'is not', null)
      .orderBy('id')
      .limit(batch)
      .execute();
    if (pending.length === 0) return done;
    const vectors = await embedder.embed(pending.map((row) => row.content ?? ''));
    for (const [index, row] of pending.entries()) {
      const vector = vectors[index];
      if (vector === undefined) continue;
      await db
        .updateTable('memories')
        .set({ embedding: vectorValue(backend, vector), embedding_model: embedder.model })
        .where('id', '=', row.id)
        .where('content', 'is not', null)
        .execute();
    }
    done += pending.length;
    logger.debug({ embedded: pending.length }, 'embedded stored memories');
  }
}
