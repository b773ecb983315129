/**
 * Single flight per key, with a cap on who may wait: the first caller starts the work, later callers for the same key
 * share its promise, and a caller past `maxWaiters` is turned away (undefined) instead of queueing without bound. A
 * caller's `wait` may end its own wait before the work does (a deadline): it stops counting as a waiter then.
 *
 * @example const ready = flights.join(userId, () => wake(userId)) ?? refuse()
 */
export class KeyedFlights<T> {
  readonly #maxWaiters: number;
  readonly #flights = new Map<string, { promise: Promise<T>; waiters: number }>();

  constructor(maxWaiters: number) {
    this.#maxWaiters = maxWaiters;
  }

  join(key: string, work: () => Promise<T>, wait: (shared: Promise<T>) => Promise<T> = (shared) => shared): Promise<T> | undefined {
    let flight = this.#flights.get(key);
    if (flight === undefined) {
      const promise = work();
      const started = { promise, waiters: 0 };
      flight = started;
      this.#flights.set(key, started);
      const land = () => {
        if (this.#flights.get(key) === started) this.#flights.delete(key);
      };
      promise.then(land, land);
    }
    if (flight.waiters >= this.#maxWaiters) return undefined;
    flight.waiters++;
    const current = flight;
    const leave = () => {
      current.waiters--;
    };
    const waiting = wait(current.promise);
    waiting.then(leave, leave);
    return waiting;
  }

  /** Whether work for the key is under way. */
  has(key: string): boolean {
    return this.#flights.has(key);
  }

  waiters(key: string): number {
    return this.#flights.get(key)?.waiters ?? 0;
  }

  /** Work under way and who waits for it, over every key (for metrics, at scrape time). */
  totals(): { flights: number; waiters: number } {
    let waiters = 0;
    for (const flight of this.#flights.values()) waiters += flight.waiters;
    return { flights: this.#flights.size, waiters };
  }
}
