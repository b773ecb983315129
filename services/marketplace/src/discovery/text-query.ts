import { type Kysely, sql } from 'kysely';
import type { MarketplaceSchema } from '../db/schema.ts';

/**
 * A plain-language query ("I need to translate legal contracts") becomes the lexemes of its words, from
 * PostgreSQL's own english configuration (what the `search` column was built with): stop words drop out, the rest
 * are stemmed. Words are runs of letters and digits only, so nothing the caller types reaches tsquery syntax.
 *
 * Matching asks for most of the lexemes, not all and not any: with n lexemes a listing must hold
 * n − ⌊n/3⌋ of them (1 of 1, 2 of 2, 2 of 3, 3 of 4, 4 of 5, 4 of 6 …, at most 8 lexemes kept). All of them
 * (websearch_to_tsquery) would let one filler word of a question ("need") empty the result; any of them would
 * let one word the whole catalogue holds ("support", "api") match everything, which is also what made the
 * first version slow (half of 10,000 listings ranked for one question). When most-of matches nothing,
 * the query falls back to any-of, so a typo in one of two words still finds the other. Ranking always uses
 * any-of (ts_rank then rewards a listing for each lexeme it holds).
 */
export const maxQueryChars = 256;
const maxWords = 32;
const maxLexemes = 8;
const cacheSize = 2000;

export type MatchMode = 'most' | 'any';

export function queryWords(query: string): string[] {
  const words =
    query
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.map((word) => word.slice(0, 64)))].slice(0, maxWords);
}

const lexemeCache = new Map<string, string[]>();

/** The distinct lexemes of the words (none when only stop words remain: the caller browses). Remembered per word list. */
export async function queryLexemes(db: Kysely<MarketplaceSchema>, words: readonly string[]): Promise<string[]> {
  if (words.length === 0) return [];
  const key = words.join(' ');
  const cached = lexemeCache.get(key);
  if (cached !== undefined) return cached;
  const { rows } = await sql<{ q: string }>`select to_tsquery('english', ${words.join(' | ')})::text as q`.execute(db);
  const lexemes = [...new Set([...(rows[0]?.q ?? '').matchAll(/'((?:[^']|'')*)'/g)].map((match) => match[1] as string))].slice(0, maxLexemes);
  if (lexemeCache.size >= cacheSize) lexemeCache.delete(lexemeCache.keys().next().value as string);
  lexemeCache.set(key, lexemes);
  return lexemes;
}

/** Lexemes as PostgreSQL printed them keep their quotes doubled; quoting them again makes a tsquery literal. */
const quoted = (lexeme: string) => `'${lexeme}'`;

export const requiredMatches = (count: number): number => count - Math.floor(count / 3);

/** `'a' | 'b' | 'c'`: what ranking uses, and matching's fallback. */
export const anyOf = (lexemes: readonly string[]): string => lexemes.map(quoted).join(' | ');

/** Every combination of `requiredMatches(n)` lexemes AND-ed, the combinations OR-ed. */
export function mostOf(lexemes: readonly string[]): string {
  const need = requiredMatches(lexemes.length);
  const groups: string[] = [];
  const pick = (start: number, chosen: string[]) => {
    if (chosen.length === need) {
      groups.push(chosen.length === 1 ? (chosen[0] as string) : `(${chosen.join(' & ')})`);
      return;
    }
    for (let index = start; index <= lexemes.length - (need - chosen.length); index++) pick(index + 1, [...chosen, quoted(lexemes[index] as string)]);
  };
  pick(0, []);
  return groups.join(' | ');
}

export const matchQuery = (lexemes: readonly string[], mode: MatchMode): string => (mode === 'most' ? mostOf(lexemes) : anyOf(lexemes));
