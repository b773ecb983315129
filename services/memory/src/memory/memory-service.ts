import type { Clock } from '@platform/kit/clock';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { MemorySchema } from '../db/schema.ts';
import type { Embedder } from '../embeddings/embedder.ts';
import type { VectorBackend } from '../embeddings/vector-column.ts';
import { Lexicon } from './lexicon.ts';
import { MemoryStore } from './memory-store.ts';
import type { StemCache } from './query-terms.ts';
import { type RecallRequest, type RecallResult, recall } from './recall.ts';
import { type SearchRequest, type SearchResult, search } from './search.ts';

export interface MemoryServiceDeps {
  db: Kysely<MemorySchema>;
  clock: Clock;
  logger: Logger;
  textSearchConfig: string;
  embedder: Embedder | undefined;
  recencyHalfLifeDays: number;
}

/** The memory server's operations over one database; the tools and routes are its front doors. */
export class MemoryService {
  readonly store: MemoryStore;
  readonly lexicon = new Lexicon();
  private readonly stemCache: StemCache = new Map();

  readonly vectors: VectorBackend;
  private readonly deps: MemoryServiceDeps;

  private constructor(deps: MemoryServiceDeps, vectors: VectorBackend) {
    this.deps = deps;
    this.vectors = vectors;
    this.store = new MemoryStore({ ...deps, lexicon: this.lexicon, vectors });
  }

  /** Reads how embeddings are stored and loads the term statistics; the database must be migrated. */
  static async open(deps: MemoryServiceDeps): Promise<MemoryService> {
    const column = await sql<{ type: string }>`
      select format_type(a.atttypid, a.atttypmod) as type from pg_attribute a
      where a.attrelid = 'memories'::regclass and a.attname = 'embedding'`.execute(deps.db);
    const service = new MemoryService(deps, column.rows[0]?.type.startsWith('vector') ? 'pgvector' : 'array');
    await service.reloadLexicon();
    return service;
  }

  get embedder(): Embedder | undefined {
    return this.deps.embedder;
  }

  /** Document frequencies of every stem held by a memory that is not erased, from PostgreSQL's own statistics. */
  async reloadLexicon(): Promise<void> {
    const [entries, totals] = await Promise.all([
      sql<{ lexeme: string; documents: number }>`
        select word as lexeme, ndoc::int as documents from ts_stat('select search_vector from memories where search_vector is not null')`.execute(this.deps.db),
      sql<{ documents: number; lexemes: string }>`
        select count(*)::int as documents, coalesce(sum(length(search_vector)), 0)::text as lexemes
        from memories where search_vector is not null`.execute(this.deps.db),
    ]);
    const total = totals.rows[0];
    this.lexicon.load(entries.rows, total?.documents ?? 0, Number(total?.lexemes ?? 0));
  }

  recall(request: RecallRequest): Promise<RecallResult> {
    return recall({ ...this.deps, lexicon: this.lexicon, stemCache: this.stemCache, vectors: this.vectors }, request);
  }

  search(request: SearchRequest): Promise<SearchResult> {
    return search({ ...this.deps, lexicon: this.lexicon, stemCache: this.stemCache }, request);
  }
}
