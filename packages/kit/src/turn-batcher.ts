/** One item's outcome in a batch: its value, or the error that item alone failed with. */
export type ItemOutcome<Result> = { ok: true; value: Result } | { ok: false; error: unknown };

interface Waiting<Item, Result> {
  item: Item;
  resolve: (value: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Calls made during one turn of the event loop, sent together at the next check phase (`setImmediate`), at most
 * `maxItems` to a send. A service that calls another for each of its own requests (the marketplace placing and
 * settling a hold per paid call) pays a request's fixed cost (headers, authentication, a wake-up on each side) once
 * per batch instead of once per call; a call made alone still leaves in the same turn, so it waits for nothing.
 * `send` answers one outcome per item, in order; when it throws, every item of that send fails with its error.
 *
 * @example const holds = new TurnBatcher((items) => client.placeHolds(items), 64); await holds.add(item)
 */
export class TurnBatcher<Item, Result> {
  readonly #send: (items: Item[]) => Promise<Array<ItemOutcome<Result>>>;
  readonly #maxItems: number;
  #queue: Array<Waiting<Item, Result>> = [];
  #scheduled = false;

  constructor(send: (items: Item[]) => Promise<Array<ItemOutcome<Result>>>, maxItems: number) {
    if (!Number.isInteger(maxItems) || maxItems < 1) throw new RangeError('maxItems must be a positive integer');
    this.#send = send;
    this.#maxItems = maxItems;
  }

  add(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    for (let start = 0; start < queue.length; start += this.#maxItems) void this.#sendChunk(queue.slice(start, start + this.#maxItems));
  }

  async #sendChunk(chunk: Array<Waiting<Item, Result>>): Promise<void> {
    let outcomes: Array<ItemOutcome<Result>>;
    try {
      outcomes = await this.#send(chunk.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of chunk) waiting.reject(error);
      return;
    }
    chunk.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined) waiting.reject(new Error(`the batch answered ${outcomes.length} results for ${chunk.length} items`));
      else if (outcome.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome.error);
    });
  }
}
