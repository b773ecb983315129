const simpleEscapes: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * Reads one member's text out of a JSON object while the object is still arriving: the model's chat answer is a
 * JSON document (`{"reply": …, "task": …}`) streamed in pieces, and the person should see `reply` grow long before
 * the document can be parsed. Only the top level of the first object counts (a `reply` inside a nested object is
 * someone else's), anything before its `{` is skipped (a ```json fence, a line of prose), and string escapes are
 * decoded even when a piece ends in the middle of one. It never judges the document: the whole answer is still
 * parsed and checked when it is complete, and that is what the person is finally shown.
 *
 * @example const scanner = new ReplyScanner('reply'); scanner.push('{"reply":"Hel'); scanner.text // 'Hel'
 */
export class ReplyScanner {
  readonly #member: string;
  #depth = 0;
  #ended = false;
  #inString = false;
  /** Inside a string: undefined, or the escape read so far (`\` alone is '', then `u`, `u0`, `u00e`…). */
  #escape: string | undefined;
  #expectKey = false;
  #stringIsKey = false;
  #key = '';
  #lastKey = '';
  #capturing = false;
  #text = '';
  #found = false;

  constructor(member: string) {
    this.#member = member;
  }

  /** Whether the member has started (its value is a string being read). */
  get found(): boolean {
    return this.#found;
  }

  /** The member's text so far; a trailing lone high surrogate waits for its pair rather than showing as garbage. */
  get text(): string {
    const last = this.#text.charCodeAt(this.#text.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? this.#text.slice(0, -1) : this.#text;
  }

  push(piece: string): void {
    for (let index = 0; index < piece.length && !this.#ended; index++) {
      const char = piece[index] as string;
      if (this.#inString) this.#stringChar(char);
      else this.#structureChar(char);
    }
  }

  #structureChar(char: string): void {
    if (char === '"') {
      if (this.#depth === 0) return;
      this.#inString = true;
      this.#stringIsKey = this.#depth === 1 && this.#expectKey;
      this.#key = '';
      this.#capturing = this.#depth === 1 && !this.#expectKey && this.#lastKey === this.#member;
      if (this.#capturing) {
        // A repeated member: JSON.parse keeps the last one, so the text starts again.
        this.#text = '';
        this.#found = true;
      }
    } else if (char === '{' || char === '[') {
      this.#depth++;
      if (this.#depth === 1) this.#expectKey = true;
    } else if (char === '}' || char === ']') {
      if (this.#depth === 0) return;
      this.#depth--;
      if (this.#depth === 0) this.#ended = true;
    } else if (this.#depth === 1 && char === ':') this.#expectKey = false;
    else if (this.#depth === 1 && char === ',') {
      this.#expectKey = true;
      this.#lastKey = '';
    }
  }

  #stringChar(char: string): void {
    if (this.#escape === undefined) {
      if (char === '\\') this.#escape = '';
      else if (char === '"') this.#closeString();
      else this.#emit(char);
      return;
    }
    if (this.#escape === '') {
      if (char === 'u') this.#escape = 'u';
      else {
        this.#escape = undefined;
        this.#emit(simpleEscapes[char] ?? char);
      }
      return;
    }
    this.#escape += char;
    if (this.#escape.length < 5) return;
    const code = Number.parseInt(this.#escape.slice(1), 16);
    this.#escape = undefined;
    if (Number.isInteger(code) && code >= 0) this.#emit(String.fromCharCode(code));
  }

  #closeString(): void {
    this.#inString = false;
    if (this.#stringIsKey) this.#lastKey = this.#key;
    this.#capturing = false;
  }

  #emit(text: string): void {
    if (this.#stringIsKey) this.#key += text;
    else if (this.#capturing) this.#text += text;
  }
}
