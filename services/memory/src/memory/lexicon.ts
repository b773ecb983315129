/**
 * What the keyword ranker knows about the corpus, kept in memory: how many memories hold each stem (document
 * frequency, for IDF weights PostgreSQL's own ranking lacks) and an index of one-character deletions of every stem
 * (SymSpell), so a misspelt query word finds the stems one edit away without scanning the vocabulary.
 *
 * Counts come from the table at start and follow this process's own writes; another instance's writes reach it at
 * its next start. Weights drift slightly meanwhile; results never become wrong, only ranked a little differently.
 */
export class Lexicon {
  private readonly frequency = new Map<string, number>();
  private readonly deletions = new Map<string, string[]>();
  private documents = 0;
  private lexemeTotal = 0;

  get documentCount(): number {
    return this.documents;
  }

  /** Mean number of distinct stems per memory, for length normalisation. */
  get averageLength(): number {
    return this.documents === 0 ? 1 : Math.max(1, this.lexemeTotal / this.documents);
  }

  documentFrequency(lexeme: string): number {
    return this.frequency.get(lexeme) ?? 0;
  }

  /** BM25's inverse document frequency: rare stems weigh more, a stem in every memory weighs almost nothing. */
  inverseFrequency(lexeme: string): number {
    const df = this.documentFrequency(lexeme);
    return Math.log(1 + (this.documents - df + 0.5) / (df + 0.5));
  }

  /** Loads the counts PostgreSQL reports (`ts_stat`) for the stored memories. */
  load(entries: Iterable<{ lexeme: string; documents: number }>, documents: number, lexemeTotal: number): void {
    this.frequency.clear();
    this.deletions.clear();
    for (const entry of entries) this.adjust(entry.lexeme, entry.documents);
    this.documents = documents;
    this.lexemeTotal = lexemeTotal;
  }

  /** A memory was stored (+1) or erased (-1) with these distinct stems. */
  record(lexemes: readonly string[], change: 1 | -1): void {
    this.documents = Math.max(0, this.documents + change);
    this.lexemeTotal = Math.max(0, this.lexemeTotal + change * lexemes.length);
    for (const lexeme of lexemes) this.adjust(lexeme, change);
  }

  /**
   * Known stems within one edit (insertion, deletion, substitution or transposition) of an unknown one, most
   * frequent first. Stems shorter than four characters are not corrected: one edit turns them into other words.
   */
  corrections(lexeme: string, max = 2): string[] {
    if (lexeme.length < 4 || this.frequency.has(lexeme)) return [];
    const found = new Set<string>();
    for (const variant of [lexeme, ...deletionsOf(lexeme)]) {
      for (const candidate of [...(this.deletions.get(variant) ?? []), ...(this.frequency.has(variant) ? [variant] : [])]) {
        if (candidate !== lexeme && withinOneEdit(lexeme, candidate)) found.add(candidate);
      }
    }
    return [...found].sort((a, b) => this.documentFrequency(b) - this.documentFrequency(a) || (a < b ? -1 : 1)).slice(0, max);
  }

  private adjust(lexeme: string, change: number): void {
    const before = this.frequency.get(lexeme) ?? 0;
    const after = Math.max(0, before + change);
    if (after === 0) this.frequency.delete(lexeme);
    else this.frequency.set(lexeme, after);
    if (before === 0 && after > 0) for (const variant of deletionsOf(lexeme)) push(this.deletions, variant, lexeme);
    else if (before > 0 && after === 0) for (const variant of deletionsOf(lexeme)) remove(this.deletions, variant, lexeme);
  }
}

function deletionsOf(word: string): string[] {
  const variants = new Set<string>();
  for (let index = 0; index < word.length; index++) variants.add(word.slice(0, index) + word.slice(index + 1));
  return [...variants];
}

function push(index: Map<string, string[]>, key: string, value: string): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, [value]);
  else list.push(value);
}

function remove(index: Map<string, string[]>, key: string, value: string): void {
  const list = index.get(key);
  if (list === undefined) return;
  const kept = list.filter((entry) => entry !== value);
  if (kept.length === 0) index.delete(key);
  else index.set(key, kept);
}

/** Optimal string alignment distance ≤ 1 (one insertion, deletion, substitution or adjacent transposition). */
export function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length - 1;
  let endB = b.length - 1;
  while (endA >= start && endB >= start && a[endA] === b[endB]) {
    endA--;
    endB--;
  }
  const restA = endA - start + 1;
  const restB = endB - start + 1;
  if (restA <= 1 && restB <= 1) return true;
  // Adjacent transposition: "ua" against "au".
  return restA === 2 && restB === 2 && a[start] === b[start + 1] && a[start + 1] === b[start];
}
