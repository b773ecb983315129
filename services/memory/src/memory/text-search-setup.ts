import { ConfigError } from '@platform/kit/config';
import { type Kysely, sql } from 'kysely';
import type { MemorySchema } from '../db/schema.ts';
import { searchVectorSql } from './sql-fragments.ts';

/**
 * Checks the configured text search configuration exists, and when it differs from the one the stored memories
 * were indexed with, indexes them again with it (stems must come from one configuration on both sides).
 * Fingerprints keep the old configuration: near-duplicate detection against older memories is looser until they
 * are replaced.
 */
export async function prepareTextSearch(db: Kysely<MemorySchema>, config: string): Promise<{ reindexed: boolean }> {
  const known = await sql<{ found: boolean }>`select exists (select 1 from pg_ts_config where cfgname = ${config}) as found`.execute(db);
  if (known.rows[0]?.found !== true) throw new ConfigError(`MEMORY_TEXT_SEARCH_CONFIG: the database has no text search configuration "${config}"`);
  const stored = await db.selectFrom('memory_settings').select('value').where('name', '=', 'text_search_config').executeTakeFirst();
  if (stored?.value === config) return { reindexed: false };
  await db.transaction().execute(async (tx) => {
    if (stored !== undefined)
      await sql`
        update memories set search_vector =
          ${searchVectorSql(config, sql`content`, sql`tags`, sql`key`)}
        where content is not null`.execute(tx);
    await tx
      .insertInto('memory_settings')
      .values({ name: 'text_search_config', value: config })
      .onConflict((conflict) => conflict.column('name').doUpdateSet({ value: config }))
      .execute();
  });
  return { reindexed: stored !== undefined };
}
