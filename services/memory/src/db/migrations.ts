import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { rootOwner } from '../owners.ts';

/**
 * The fingerprint that makes a near duplicate visible to a unique index: the memory's stems in the order they
 * appear (stop words and inflection gone, so "The user's favourite colour is blue" and "User's favourite colour:
 * blue" agree) plus a mark for negation, since the English stop word list drops "not" and "no" and "likes coffee"
 * must not merge with "does not like coffee". Contractions are spelt out first ("doesn't" → "does not"), since the
 * parser would keep "doesn" as a word. Text with no stems at all (only stop words or symbols) falls back to
 * its lowercased, space-collapsed form.
 */
const fingerprintFunction = sql`
create or replace function memory_fingerprint(config regconfig, body text) returns text
language sql immutable parallel safe as $$
  select md5(
    coalesce(
      nullif((select string_agg(word.lexeme, ' ' order by word.position)
              from (select entry.lexeme, unnest(entry.positions) as position
                    from unnest(to_tsvector(config, regexp_replace(body, 'n[''’]t\\M', ' not', 'gi'))) as entry) as word), ''),
      'text:' || lower(regexp_replace(btrim(body), '\\s+', ' ', 'g')))
    || case when body ~* '(\\m(not|no|never|nor|none|nothing|nobody|neither|cannot|without)\\M|n[''’]t\\M)' then '|negated' else '' end)
$$`;

// The exact scan used when PostgreSQL has no pgvector: embeddings are real[] and compared here.
const cosineDistanceFunction = sql`
create or replace function memory_cosine_distance(a real[], b real[]) returns float8
language sql immutable parallel safe as $$
  select 1 - sum(x * y) / nullif(sqrt(sum(x * x)) * sqrt(sum(y * y)), 0) from unnest(a, b) as pair(x, y)
$$`;

const memories: Migration = {
  async up(db) {
    // pgvector when the server has it (PGlite loads it; PostgreSQL needs the package installed); else real[] and an
    // exact scan (see README). Checked first: a failed CREATE EXTENSION would abort the migration's transaction.
    const available = await sql<{ found: boolean }>`select exists (select 1 from pg_available_extensions where name = 'vector') as found`.execute(db);
    const pgvector = available.rows[0]?.found === true;
    if (pgvector) {
      // Several service schemas may share one database; the extension lives once, in public.
      await sql`select pg_advisory_xact_lock(hashtext('platform-memory-create-extension-vector'))`.execute(db);
      await sql`create extension if not exists vector with schema public`.execute(db);
    }
    await sql`${fingerprintFunction}`.execute(db);
    await sql`${cosineDistanceFunction}`.execute(db);
    await db.schema
      .createTable('memories')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('scope', 'text', (c) => c.notNull())
      // Null once erased (a hard forget): the row stays as a tombstone so supersession chains keep their links.
      .addColumn('content', 'text')
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('fact', 'preference', 'event', 'note', 'procedure')`))
      .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('key', 'text')
      .addColumn('importance', 'real', (c) => c.notNull().check(sql`importance >= 0 and importance <= 1`))
      .addColumn('source_conversation_id', 'text')
      .addColumn('source_intent_id', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('invalidated_at', 'timestamptz')
      .addColumn('superseded_by', 'text')
      .addColumn('forgotten_at', 'timestamptz')
      .addColumn('forget_reason', 'text')
      .addColumn('erased', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('fingerprint', 'text')
      .addColumn('search_vector', sql`tsvector`)
      .addColumn('token_estimate', 'integer', (c) => c.notNull())
      .addColumn('embedding', pgvector ? sql`vector` : sql`real[]`)
      .addColumn('embedding_model', 'text')
      .execute();
    // fastupdate off: with it on, new entries wait in a pending list every search must scan until a vacuum merges
    // them (seen: 3 ms of a 6 ms recall at 100,000 memories); inserts pay a little more instead.
    await sql`create index memories_search_vector on memories using gin (search_vector) with (fastupdate = off)`.execute(db);
    // One valid copy per scope: a concurrent duplicate loses on this index instead of slipping in beside the first.
    await sql`create unique index memories_current_fingerprint on memories (scope, fingerprint) where invalidated_at is null and forgotten_at is null`.execute(
      db,
    );
    await sql`create unique index memories_current_key on memories (scope, key) where key is not null and invalidated_at is null and forgotten_at is null`.execute(
      db,
    );
    await sql`create index memories_scope_created on memories (scope, created_at desc, id desc)`.execute(db);
    await sql`create index memories_superseded_by on memories (superseded_by) where superseded_by is not null`.execute(db);
    await sql`create index memories_embedding_pending on memories (id) where embedding is null and content is not null`.execute(db);
    await db.schema
      .createTable('memory_settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
};

/**
 * Memories belong to an owner, taken only from the verified bearer (the root token's owner, or the user a per-user
 * token names). Rows from before owners belong to the root token's owner, which they were stored under. Duplicates,
 * keys and listing are per owner, then per scope.
 */
const owners: Migration = {
  async up(db) {
    await sql`alter table memories add column owner text not null default ${sql.lit(rootOwner)}`.execute(db);
    // Every writer names the owner from here on; a default would hide one that forgot.
    await sql`alter table memories alter column owner drop default`.execute(db);
    await sql`drop index memories_current_fingerprint`.execute(db);
    await sql`drop index memories_current_key`.execute(db);
    await sql`drop index memories_scope_created`.execute(db);
    await sql`create unique index memories_current_fingerprint on memories (owner, scope, fingerprint) where invalidated_at is null and forgotten_at is null`.execute(
      db,
    );
    await sql`create unique index memories_current_key on memories (owner, scope, key) where key is not null and invalidated_at is null and forgotten_at is null`.execute(
      db,
    );
    await sql`create index memories_owner_scope_created on memories (owner, scope, created_at desc, id desc)`.execute(db);
  },
};

export const migrations: Record<string, Migration> = { '0001_memories': memories, '0002_owners': owners };
