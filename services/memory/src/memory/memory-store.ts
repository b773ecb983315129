import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { monotonicUuidv7 } from '@platform/kit/ids';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { MemoryKind, MemorySchema } from '../db/schema.ts';
import type { Embedder } from '../embeddings/embedder.ts';
import { type VectorBackend, vectorValue } from '../embeddings/vector-column.ts';
import { estimateTokens, type MemoryRow, type MemoryView, memoryColumns, statusOf, viewOf } from './memory-view.ts';
import type { OwnerLexicons } from './owner-lexicons.ts';
import { searchVectorSql, textArray } from './sql-fragments.ts';

export interface NewMemory {
  content: string;
  kind: MemoryKind;
  tags: string[];
  key: string | undefined;
  importance: number;
  supersedes: string[];
  source: { conversation_id?: string | undefined; intent_id?: string | undefined };
}

export interface RememberOutcome {
  id: string;
  /** created: stored; duplicate: an equal or near-equal valid memory already held it, its id is returned. */
  status: 'created' | 'duplicate';
  /** Memories this one replaced (named in `supersedes`, or the previous holder of its `key`). */
  superseded: string[];
}

export interface HistoryEntry extends MemoryView {
  supersedes: string[];
}

export interface StoreDeps {
  db: Kysely<MemorySchema>;
  clock: Clock;
  textSearchConfig: string;
  lexicons: OwnerLexicons;
  vectors: VectorBackend;
  embedder: Embedder | undefined;
  logger: Logger;
}

type Tx = Transaction<MemorySchema>;

/** A concurrent writer took the fingerprint or key between our check and insert: run the batch again. */
class WriteRace extends Error {}
const raceRetries = 3;

/**
 * Writes and direct reads of memories: remember (with duplicates and supersession), forget, get, history. Every
 * operation is one owner's: another owner's memory is not found (404, so its existence does not leak either).
 */
export class MemoryStore {
  private readonly deps: StoreDeps;

  constructor(deps: StoreDeps) {
    this.deps = deps;
  }

  /** Stores a batch atomically: every memory lands, or none does and the error names the one refused. */
  async remember(owner: string, scope: string, items: readonly NewMemory[]): Promise<RememberOutcome[]> {
    const vectors = await this.embedQuietly(items.map((item) => item.content));
    // Before the transaction: a first load then reads the table without this batch, which is counted below.
    const { lexicon } = await this.deps.lexicons.of(owner);
    const where = { owner, scope };
    for (let attempt = 1; ; attempt++) {
      const created: string[][] = [];
      try {
        const outcomes = await this.deps.db.transaction().execute(async (tx) => {
          const results: RememberOutcome[] = [];
          for (const [index, item] of items.entries()) results.push(await this.rememberOne(tx, where, item, index, vectors?.[index], created));
          return results;
        });
        for (const lexemes of created) lexicon.record(lexemes, 1);
        return outcomes;
      } catch (error) {
        const raced = error instanceof WriteRace || (error as { code?: unknown }).code === '23505';
        if (!raced || attempt >= raceRetries) throw error;
      }
    }
  }

  private async rememberOne(
    tx: Tx,
    { owner, scope }: { owner: string; scope: string },
    item: NewMemory,
    index: number,
    vector: number[] | undefined,
    created: string[][],
  ): Promise<RememberOutcome> {
    const now = this.deps.clock.now();
    const id = monotonicUuidv7(now.getTime());
    const config = this.deps.textSearchConfig;
    const superseded = await this.supersedeNamed(tx, { owner, scope }, item.supersedes, id, now, index);
    if (item.key !== undefined) {
      // A new memory under the same key replaces the current one, unless it says the same thing (then it is a duplicate).
      const replaced = await sql<{ id: string }>`
        update memories set invalidated_at = ${now}, superseded_by = ${id}
        where owner = ${owner} and scope = ${scope} and key = ${item.key} and invalidated_at is null and forgotten_at is null
          and fingerprint is distinct from memory_fingerprint(${config}::regconfig, ${item.content})
        returning id`.execute(tx);
      superseded.push(...replaced.rows.map((row) => row.id));
    }
    const embedding = vector === undefined || this.deps.embedder === undefined ? null : vectorValue(this.deps.vectors, vector);
    const inserted = await sql<{ id: string; lexemes: string[] }>`
      insert into memories (id, owner, scope, content, kind, tags, key, importance, source_conversation_id, source_intent_id, created_at,
                            fingerprint, search_vector, token_estimate, embedding, embedding_model)
      values (${id}, ${owner}, ${scope}, ${item.content}, ${item.kind}, ${textArray(item.tags)}, ${item.key ?? null}, ${item.importance},
              ${item.source.conversation_id ?? null}, ${item.source.intent_id ?? null}, ${now},
              memory_fingerprint(${config}::regconfig, ${item.content}), ${searchVectorSql(config, sql`${item.content}`, textArray(item.tags), sql`${item.key ?? null}::text`)},
              ${estimateTokens(item.content)}, ${embedding}, ${embedding === null ? null : (this.deps.embedder?.model ?? null)})
      on conflict do nothing
      returning id, tsvector_to_array(search_vector) as lexemes`.execute(tx);
    const row = inserted.rows[0];
    if (row !== undefined) {
      created.push(row.lexemes);
      return { id: row.id, status: 'created', superseded };
    }
    const existing = await sql<{ id: string }>`
      select id from memories
      where owner = ${owner} and scope = ${scope} and fingerprint = memory_fingerprint(${config}::regconfig, ${item.content}) and invalidated_at is null and forgotten_at is null`.execute(
      tx,
    );
    const holder = existing.rows[0]?.id;
    if (holder === undefined) throw new WriteRace();
    // What this memory replaced is now replaced by the copy already held.
    if (superseded.length > 0) await tx.updateTable('memories').set({ superseded_by: holder }).where('superseded_by', '=', id).execute();
    return { id: holder, status: 'duplicate', superseded };
  }

  private async supersedeNamed(
    tx: Tx,
    { owner, scope }: { owner: string; scope: string },
    ids: readonly string[],
    by: string,
    now: Date,
    index: number,
  ): Promise<string[]> {
    if (ids.length === 0) return [];
    const unique = [...new Set(ids)];
    const rows = await tx
      .selectFrom('memories')
      .select(['id', 'scope', 'invalidated_at', 'superseded_by', 'forgotten_at', 'erased'])
      .where('id', 'in', unique)
      .where('owner', '=', owner)
      .forUpdate()
      .execute();
    const found = new Map(rows.map((row) => [row.id, row]));
    const field = `memories[${index}].supersedes`;
    for (const id of unique) {
      const row = found.get(id);
      if (row === undefined || row.erased) throw new ServiceError('not_found', `${field}: memory ${id} not found`, { details: { field } });
      if (row.scope !== scope)
        throw new ServiceError('invalid_request', `${field}: memory ${id} is in scope "${row.scope}", not "${scope}"`, { details: { field } });
      if (row.forgotten_at !== null)
        throw new ServiceError('conflict', `${field}: memory ${id} was forgotten and cannot be superseded`, { details: { field } });
      if (row.invalidated_at !== null)
        throw new ServiceError('conflict', `${field}: memory ${id} is already superseded by ${row.superseded_by}; supersede that one instead`, {
          details: { field, superseded_by: row.superseded_by },
        });
    }
    await tx.updateTable('memories').set({ invalidated_at: now, superseded_by: by }).where('id', 'in', unique).where('owner', '=', owner).execute();
    return unique;
  }

  /** Vectors for the batch, or undefined when there is no embedder or it failed (the backfill retries those later). */
  private async embedQuietly(texts: string[]): Promise<number[][] | undefined> {
    if (this.deps.embedder === undefined) return undefined;
    try {
      return await this.deps.embedder.embed(texts);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'embedding failed; memories stored without vectors and embedded later');
      return undefined;
    }
  }

  async get(owner: string, id: string): Promise<MemoryView> {
    const row = await this.deps.db.selectFrom('memories').select(memoryColumns).where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
    if (row === undefined) throw new ServiceError('not_found', `memory ${id} not found`);
    if (row.erased) throw new ServiceError('not_found', `memory ${id} was erased (forgotten with hard: true)`);
    return viewOf(row as MemoryRow);
  }

  /**
   * The whole supersession chain a memory belongs to, oldest first (by how many replacements separate it from the
   * newest, then by date): follow `superseded_by` to the newest, then every memory that newest one replaced,
   * directly or through others. Erased links stay as tombstones.
   */
  async history(owner: string, id: string): Promise<{ id: string; current: string | null; chain: HistoryEntry[] }> {
    // Every step stays within the owner (supersession never crosses owners; the check costs nothing and makes sure).
    const rows = await sql<MemoryRow>`
      with recursive newer(id, depth) as (
        select id, 0 from memories where id = ${id} and owner = ${owner}
        union
        select m.superseded_by, newer.depth + 1 from memories m join newer on m.id = newer.id
        where m.superseded_by is not null and m.owner = ${owner} and newer.depth < 10000
      ),
      head as (select id from newer order by depth desc limit 1),
      older(id, depth) as (
        select id, 0 from head
        union
        select m.id, older.depth + 1 from memories m join older on m.superseded_by = older.id where m.owner = ${owner} and older.depth < 10000
      )
      select ${sql.join(memoryColumns.map((column) => sql.ref(`m.${column}`)))}
      from memories m join (select id, max(depth) as depth from older group by id) chain on chain.id = m.id
      where m.owner = ${owner}
      order by chain.depth desc, m.created_at, m.id`.execute(this.deps.db);
    // An unknown id, or another owner's, reaches no row.
    if (rows.rows.length === 0) throw new ServiceError('not_found', `memory ${id} not found`);
    const chain: HistoryEntry[] = rows.rows.map((row) => ({ ...viewOf(row), supersedes: [] }));
    const byId = new Map(chain.map((entry) => [entry.id, entry]));
    for (const entry of chain) if (entry.superseded_by !== null) byId.get(entry.superseded_by)?.supersedes.push(entry.id);
    const newest = chain.find((entry) => entry.superseded_by === null);
    return { id, current: newest !== undefined && newest.status === 'valid' ? newest.id : null, chain };
  }

  /**
   * Soft: hidden from recall and search, kept for get and history. Hard: the content, tags, key, source, search
   * terms and vector are removed; only the id and dates stay so chains through it still connect.
   */
  async forget(
    owner: string,
    id: string,
    hard: boolean,
    reason: string | undefined,
  ): Promise<{ id: string; status: 'forgotten' | 'erased'; changed: boolean }> {
    const now = this.deps.clock.now();
    const { lexicon } = await this.deps.lexicons.of(owner);
    const result = await this.deps.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('memories')
        .select(['id', 'erased', 'forgotten_at', 'invalidated_at', sql<string[] | null>`tsvector_to_array(search_vector)`.as('lexemes')])
        .where('id', '=', id)
        .where('owner', '=', owner)
        .forUpdate()
        .executeTakeFirst();
      if (row === undefined) throw new ServiceError('not_found', `memory ${id} not found`);
      if (row.erased) return { status: 'erased' as const, changed: false, lexemes: null };
      if (!hard) {
        if (statusOf(row) === 'forgotten') return { status: 'forgotten' as const, changed: false, lexemes: null };
        await tx
          .updateTable('memories')
          .set({ forgotten_at: now, forget_reason: reason ?? null })
          .where('id', '=', id)
          .execute();
        return { status: 'forgotten' as const, changed: true, lexemes: null };
      }
      await tx
        .updateTable('memories')
        .set({
          content: null,
          tags: sql`'{}'::text[]`,
          key: null,
          source_conversation_id: null,
          source_intent_id: null,
          fingerprint: null,
          search_vector: null,
          embedding: null,
          embedding_model: null,
          forget_reason: null,
          erased: true,
          forgotten_at: row.forgotten_at ?? now,
        })
        .where('id', '=', id)
        .execute();
      return { status: 'erased' as const, changed: true, lexemes: row.lexemes ?? [] };
    });
    if (result.lexemes !== null) lexicon.record(result.lexemes, -1);
    return { id, status: result.status, changed: result.changed };
  }
}
