import { type Kysely, sql } from 'kysely';
import type { MemorySchema } from '../db/schema.ts';
import { limits } from '../limits.ts';
import { Lexicon } from './lexicon.ts';
import type { StemCache } from './query-terms.ts';

/** What keyword retrieval knows of one owner's memories: their term statistics, and the stems of words they asked for. */
export interface OwnerIndex {
  readonly lexicon: Lexicon;
  readonly stemCache: StemCache;
}

/**
 * Term statistics per owner, loaded on an owner's first request and kept for the most recently active owners.
 * Per owner because they are visible: IDF weights shape every score, search cursors carry the weighted stems, and
 * near spellings are chosen from the known stems; statistics shared across owners would tell one user which words
 * another's memories hold and how often. The stem cache is per owner too, so no one can time whether someone else
 * asked for a word.
 *
 * A writer takes its owner's index before its transaction starts, so a load never misses a committed write that is
 * then also counted on top (it would count it twice).
 */
export class OwnerLexicons {
  private readonly loaded = new Map<string, Promise<OwnerIndex>>();
  private readonly db: Kysely<MemorySchema>;

  constructor(db: Kysely<MemorySchema>) {
    this.db = db;
  }

  /** The owner's index, loading it from the table on first use. */
  of(owner: string): Promise<OwnerIndex> {
    let index = this.loaded.get(owner);
    if (index === undefined) {
      index = this.load(owner);
      // A failed load (the database was away) is tried again by the next request, not remembered.
      index.catch(() => {
        if (this.loaded.get(owner) === index) this.loaded.delete(owner);
      });
    }
    // Re-inserted so the map's order is least recently used first.
    this.loaded.delete(owner);
    this.loaded.set(owner, index);
    if (this.loaded.size > limits.ownersCached) this.loaded.delete(this.loaded.keys().next().value as string);
    return index;
  }

  /** Document frequencies of every stem the owner's memories hold (not erased), from PostgreSQL's own statistics. */
  private async load(owner: string): Promise<OwnerIndex> {
    const [entries, totals] = await Promise.all([
      // ts_stat takes its query as text: the owner goes in as a quoted literal made by format's %L, never spliced.
      sql<{ lexeme: string; documents: number }>`
        select word as lexeme, ndoc::int as documents
        from ts_stat(format('select search_vector from memories where search_vector is not null and owner = %L', ${owner}::text))`.execute(this.db),
      sql<{ documents: number; lexemes: string }>`
        select count(*)::int as documents, coalesce(sum(length(search_vector)), 0)::text as lexemes
        from memories where search_vector is not null and owner = ${owner}`.execute(this.db),
    ]);
    const total = totals.rows[0];
    const lexicon = new Lexicon();
    lexicon.load(entries.rows, total?.documents ?? 0, Number(total?.lexemes ?? 0));
    return { lexicon, stemCache: new Map() };
  }
}
