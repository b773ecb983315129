import { type Kysely, sql } from 'kysely';
import type { MemorySchema } from '../db/schema.ts';
import type { Lexicon } from './lexicon.ts';

/** A piece of query text and how much its words count (the newest conversation turn counts most). */
export interface QueryText {
  text: string;
  weight: number;
}

/** One stem the keyword ranker looks for, with its weight and the query words that produced it. */
export interface QueryTerm {
  lexeme: string;
  weight: number;
  words: string[];
  /** True when no memory holds the word's own stem and this is a known stem one edit away (a near spelling). */
  corrected: boolean;
}

const wordPattern = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;
const maxWords = 64;
/** A corrected stem counts for less than one the caller actually wrote. */
const correctionDiscount = 0.8;

/** The distinct words of the texts, each with the largest weight it appears with; the heaviest kept when too many. */
export function wordsOf(texts: readonly QueryText[]): Map<string, number> {
  const words = new Map<string, number>();
  for (const { text, weight } of texts) {
    for (const match of text.toLowerCase().matchAll(wordPattern)) {
      const word = match[0].replace(/’/g, "'");
      words.set(word, Math.max(words.get(word) ?? 0, weight));
    }
  }
  if (words.size <= maxWords) return words;
  // The heaviest (newest) words, and among equals the longest: long words are the rarer, more telling ones.
  return new Map([...words].sort((a, b) => b[1] - a[1] || b[0].length - a[0].length).slice(0, maxWords));
}

/**
 * Stems the query's words with the same text search configuration the memories were indexed with (so "booked"
 * meets "booking"), drops stop words, weights each stem by its rarity, and replaces stems no memory holds by known
 * stems one edit away ("restuarant" → "restaur", "favorite" → "favourit").
 */
export async function termsOf(
  db: Kysely<MemorySchema>,
  config: string,
  lexicon: Lexicon,
  texts: readonly QueryText[],
  stemCache: StemCache,
): Promise<QueryTerm[]> {
  const words = wordsOf(texts);
  if (words.size === 0) return [];
  const stemmed = await stemsOf(db, config, [...words.keys()], stemCache);
  const terms = new Map<string, QueryTerm>();
  const add = (lexeme: string, weight: number, word: string, corrected: boolean) => {
    const existing = terms.get(lexeme);
    if (existing === undefined) terms.set(lexeme, { lexeme, weight, words: [word], corrected });
    else {
      existing.weight = Math.max(existing.weight, weight);
      existing.corrected &&= corrected;
      if (!existing.words.includes(word)) existing.words.push(word);
    }
  };
  for (const [word, lexemes] of stemmed) {
    const weight = words.get(word) ?? 0;
    for (const lexeme of lexemes) {
      if (lexicon.documentFrequency(lexeme) > 0) add(lexeme, weight * lexicon.inverseFrequency(lexeme), word, false);
      else for (const near of lexicon.corrections(lexeme)) add(near, weight * correctionDiscount * lexicon.inverseFrequency(near), word, true);
    }
  }
  return [...terms.values()].filter((term) => term.weight > 0).sort((a, b) => b.weight - a.weight || (a.lexeme < b.lexeme ? -1 : 1));
}

/** Words already stemmed, per owner (a bounded map, oldest entry dropped first). */
export type StemCache = Map<string, string[]>;
const stemCacheSize = 5_000;

/**
 * Each word's stems under the configuration, from PostgreSQL (the same stemmer that indexed the memories); words
 * seen before come from a bounded cache, so a typical recall skips this round trip.
 */
async function stemsOf(db: Kysely<MemorySchema>, config: string, words: readonly string[], stemCache: StemCache): Promise<Map<string, string[]>> {
  const stems = new Map<string, string[]>();
  const missing: string[] = [];
  for (const word of words) {
    const cached = stemCache.get(word);
    if (cached === undefined) missing.push(word);
    else stems.set(word, cached);
  }
  if (missing.length > 0) {
    const result = await sql<{ word: string; lexemes: string[] }>`
      select w.word, tsvector_to_array(to_tsvector(${config}::regconfig, w.word)) as lexemes
      from jsonb_array_elements_text(${JSON.stringify(missing)}::jsonb) as w(word)`.execute(db);
    for (const { word, lexemes } of result.rows) {
      stems.set(word, lexemes);
      if (stemCache.size >= stemCacheSize) stemCache.delete(stemCache.keys().next().value as string);
      stemCache.set(word, lexemes);
    }
  }
  return stems;
}

/** A stem as a tsquery operand: quoted, so characters tsquery treats as operators stay literal. */
export function tsqueryOperand(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
