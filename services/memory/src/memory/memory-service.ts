import type { Clock } from '@platform/kit/clock';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { MemorySchema } from '../db/schema.ts';
import type { Embedder } from '../embeddings/embedder.ts';
import type { VectorBackend } from '../embeddings/vector-column.ts';
import type { MemoryMetrics } from '../metrics.ts';
import type { Lexicon } from './lexicon.ts';
import { MemoryStore } from './memory-store.ts';
import { OwnerLexicons } from './owner-lexicons.ts';
import { type RecallRequest, type RecallResult, recall } from './recall.ts';
import { type SearchRequest, type SearchResult, search } from './search.ts';

export interface MemoryServiceDeps {
  db: Kysely<MemorySchema>;
  clock: Clock;
  logger: Logger;
  textSearchConfig: string;
  embedder: Embedder | undefined;
  recencyHalfLifeDays: number;
  /** Recall and search latency are observed here; absent, not measured. */
  metrics?: MemoryMetrics | undefined;
}

/** The memory server's operations over one database; the tools and routes are its front doors. */
export class MemoryService {
  readonly store: MemoryStore;
  private readonly lexicons: OwnerLexicons;

  readonly vectors: VectorBackend;
  private readonly deps: MemoryServiceDeps;

  private constructor(deps: MemoryServiceDeps, vectors: VectorBackend) {
    this.deps = deps;
    this.vectors = vectors;
    this.lexicons = new OwnerLexicons(deps.db);
    this.store = new MemoryStore({ ...deps, lexicons: this.lexicons, vectors });
  }

  /** Reads how embeddings are stored; the database must be migrated. Term statistics load per owner, on first use. */
  static async open(deps: MemoryServiceDeps): Promise<MemoryService> {
    const column = await sql<{ type: string }>`
      select format_type(a.atttypid, a.atttypmod) as type from pg_attribute a
      where a.attrelid = 'memories'::regclass and a.attname = 'embedding'`.execute(deps.db);
    return new MemoryService(deps, column.rows[0]?.type.startsWith('vector') ? 'pgvector' : 'array');
  }

  get embedder(): Embedder | undefined {
    return this.deps.embedder;
  }

  /** One owner's term statistics (loaded on first use). */
  async lexiconOf(owner: string): Promise<Lexicon> {
    return (await this.lexicons.of(owner)).lexicon;
  }

  async recall(request: RecallRequest): Promise<RecallResult> {
    const end = this.deps.metrics?.recall.startTimer();
    try {
      const index = await this.lexicons.of(request.filters.owner);
      return await recall({ ...this.deps, ...index, vectors: this.vectors }, request);
    } finally {
      end?.();
    }
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    const end = this.deps.metrics?.search.startTimer();
    try {
      const index = await this.lexicons.of(request.filters.owner);
      return await search({ ...this.deps, ...index }, request);
    } finally {
      end?.();
    }
  }

  /** The memories held, every owner's: what neither a newer memory superseded nor forget removed (a partial index counts them). */
  async countHeld(): Promise<number> {
    const row = await this.deps.db
      .selectFrom('memories')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('invalidated_at', 'is', null)
      .where('forgotten_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }
}
