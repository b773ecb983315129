/**
 * Runs tasks one at a time per key, in the order they were asked for; different keys run side by side. A task runs
 * after the one before it whether that one succeeded or failed, and a failure is only seen by its own caller.
 *
 * @example await appends.run(intentId, () => writeNextEnvelope())
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    this.#tails.set(key, next);
    const forget = () => {
      if (this.#tails.get(key) === next) this.#tails.delete(key);
    };
    next.then(forget, forget);
    return next;
  }
}
