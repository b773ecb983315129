import type { Clock } from '@platform/kit/clock';

// Given as the abort reason: without one, every abort() builds a DOMException with a stack, once per call.
const stopped = Symbol('watchdog stopped');

/**
 * Calls `onIdle` once nothing has happened for `idleMs` (by the injected clock, so tests move time instead of
 * waiting). `touch()` records progress; it only stores a time, so it is cheap enough to call for every chunk of a
 * stream, and one timer covers the whole call instead of one per chunk.
 */
export class Watchdog {
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #onIdle: () => void;
  readonly #stopSleeping = new AbortController();
  #lastProgress: number;
  #stopped = false;

  constructor(clock: Clock, idleMs: number, onIdle: () => void) {
    this.#clock = clock;
    this.#idleMs = idleMs;
    this.#onIdle = onIdle;
    this.#lastProgress = clock.now().getTime();
    void this.#watch();
  }

  touch(): void {
    this.#lastProgress = this.#clock.now().getTime();
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#stopSleeping.abort(stopped);
  }

  async #watch(): Promise<void> {
    let wait = this.#idleMs;
    while (!this.#stopped) {
      await this.#clock.sleep(wait, this.#stopSleeping.signal);
      if (this.#stopped) return;
      const idle = this.#clock.now().getTime() - this.#lastProgress;
      if (idle >= this.#idleMs) {
        this.stop();
        this.#onIdle();
        return;
      }
      wait = this.#idleMs - idle;
    }
  }
}
