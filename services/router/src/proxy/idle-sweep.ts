import type { Clock } from '@platform/kit/clock';

/** One exchange under watch: `touch` when a byte moves, `stop` once it is over. */
export interface IdleWatch {
  touch(): void;
  stop(): void;
}

interface Watched {
  lastMovedAt: number;
  expire: () => void;
}

/**
 * One watch over every proxied exchange in flight: each records when a byte last moved, and one loop on the injected
 * clock wakes every quarter of the timeout and cuts those idle for the whole of it (so an exchange is cut between one
 * and one and a quarter timeouts after its last byte). A watchdog of its own per exchange cost every request an
 * AbortController, a timer and a promise chain, garbage on the router's hottest path; an idle router runs no loop at all.
 *
 * @example const idle = new IdleSweep(clock, 30_000); const watch = idle.watch(() => upstream.destroy()); ... watch.stop()
 */
export class IdleSweep {
  readonly #clock: Clock;
  readonly timeoutMs: number;
  readonly #watched = new Set<Watched>();
  readonly #closed = new AbortController();
  #sweeping = false;

  constructor(clock: Clock, timeoutMs: number) {
    this.#clock = clock;
    this.timeoutMs = timeoutMs;
  }

  /** Watches one exchange; `expire` is called once if nothing moves for the timeout. */
  watch(expire: () => void): IdleWatch {
    const watched: Watched = { lastMovedAt: this.#clock.now().getTime(), expire };
    this.#watched.add(watched);
    if (!this.#sweeping && !this.#closed.signal.aborted) {
      this.#sweeping = true;
      void this.#sweep();
    }
    return {
      touch: () => {
        watched.lastMovedAt = this.#clock.now().getTime();
      },
      stop: () => {
        this.#watched.delete(watched);
      },
    };
  }

  /** Ends the loop (the router is closing); exchanges still open are no longer cut. */
  close(): void {
    this.#closed.abort();
  }

  async #sweep(): Promise<void> {
    try {
      while (this.#watched.size > 0 && !this.#closed.signal.aborted) {
        await this.#clock.sleep(this.timeoutMs / 4, this.#closed.signal);
        const now = this.#clock.now().getTime();
        for (const watched of this.#watched)
          if (now - watched.lastMovedAt >= this.timeoutMs) {
            this.#watched.delete(watched);
            watched.expire();
          }
      }
    } finally {
      this.#sweeping = false;
    }
  }
}
