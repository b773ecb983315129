import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { MemorySchema } from '../src/db/schema.ts';
import { searchVectorSql } from '../src/memory/sql-fragments.ts';
import type { SyntheticMemory } from './synthetic.ts';

const chunk = 2_000;

/**
 * Loads a corpus straight into the table with the same fingerprint and search vector SQL the server writes
 * (fixture loading for the scale run; remember's own speed is measured separately, through HTTP).
 */
export async function bulkLoad(db: Kysely<MemorySchema>, memories: readonly SyntheticMemory[], config = 'english', scope = 'default'): Promise<void> {
  const start = Date.now() - memories.length * 60_000;
  for (let offset = 0; offset < memories.length; offset += chunk) {
    const rows = memories.slice(offset, offset + chunk).map((memory, index) => ({
      id: randomUUID(),
      content: memory.content,
      kind: memory.kind,
      tags: memory.tags,
      importance: memory.importance,
      created_at: new Date(start + (offset + index) * 60_000).toISOString(),
    }));
    const tags = sql`array(select jsonb_array_elements_text(r.tags))`;
    await sql`
      insert into memories (id, scope, content, kind, tags, importance, created_at, fingerprint, search_vector, token_estimate)
      select r.id, ${scope}, r.content, r.kind, ${tags}, r.importance, r.created_at, memory_fingerprint(${config}::regconfig, r.content),
             ${searchVectorSql(config, sql`r.content`, tags, sql`null::text`)}, greatest(1, ceil(length(r.content) / 4.0))::int
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id text, content text, kind text, tags jsonb, importance real, created_at timestamptz)
      on conflict do nothing`.execute(db);
  }
  await sql`analyze memories`.execute(db);
}
