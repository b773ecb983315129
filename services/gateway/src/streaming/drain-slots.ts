/**
 * Bounds how many abandoned streams are read to their end at once. Each drain holds an upstream connection and
 * some memory for up to GATEWAY_DRAIN_TIMEOUT_MS; past the bound, an abandoned stream is cut and charged its
 * reservation at once, so clients that walk away cannot pile up work.
 */
export class DrainSlots {
  readonly max: number;
  #active = 0;
  #closed = false;
  readonly #stops = new Set<AbortController>();

  constructor(max: number) {
    this.max = max;
  }

  get active(): number {
    return this.#active;
  }

  /** A slot and the signal that ends the drain early (shutdown), or undefined when all are taken. */
  take(): { signal: AbortSignal; give: () => void } | undefined {
    if (this.#closed || this.#active >= this.max) return undefined;
    this.#active++;
    const stop = new AbortController();
    this.#stops.add(stop);
    let given = false;
    return {
      signal: stop.signal,
      give: () => {
        if (given) return;
        given = true;
        this.#active--;
        this.#stops.delete(stop);
      },
    };
  }

  /** Ends every drain now and refuses new ones (shutdown): each charges its reservation instead of waiting for usage. */
  stopAll(): void {
    this.#closed = true;
    for (const stop of this.#stops) stop.abort();
  }
}
