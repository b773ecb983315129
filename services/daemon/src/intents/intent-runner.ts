import { ServiceError } from '@platform/kit/errors';
import { type Context, captureTraceContext, runInTraceContext, type ServiceTracing, tracingOff } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import type { AsyncStrategy } from '../config.ts';
import { type CancelReason, runIntent } from '../rail/rail.ts';
import type { RailContext } from '../rail/rail-context.ts';
import type { IntentBook } from './intent-book.ts';
import { type IntentSource, type IntentState, isTerminal } from './intent-state.ts';

interface Run {
  id: string;
  cancel: AbortController;
  cancelReason: CancelReason;
  done: Promise<void>;
}

/** How a new message meets a walk in flight: the async strategies, plus `sync` for POST /messages (never waits). */
export type SubmitStrategy = AsyncStrategy | 'sync';

/**
 * One walk at a time (the spec's single flight): intents wait in a FIFO queue and run one after another. The queue
 * lives in the journal (an intent that has not ended is queued), so a restart finds it in the same order.
 */
export class IntentRunner {
  readonly #book: IntentBook;
  readonly #rail: RailContext;
  readonly #logger: Logger;
  readonly #maxQueued: number;
  readonly #queue: string[] = [];
  readonly #endWaiters = new Map<string, (() => void)[]>();
  readonly #drain = new AbortController();
  readonly #finishedListeners: ((state: IntentState) => void)[] = [];
  readonly #tracing: ServiceTracing;
  /** The trace each queued intent was submitted in: its walk, later, is a span of that trace. */
  readonly #submittedIn = new Map<string, Context>();
  #current: Run | undefined;
  #pumping: Promise<void> | undefined;

  constructor(options: { book: IntentBook; rail: RailContext; logger: Logger; maxQueued: number; tracing?: ServiceTracing }) {
    this.#tracing = options.tracing ?? tracingOff;
    this.#book = options.book;
    this.#rail = options.rail;
    this.#logger = options.logger;
    this.#maxQueued = options.maxQueued;
  }

  /** A walk is in flight or intents are waiting for one. */
  get busy(): boolean {
    return this.#current !== undefined || this.#queue.length > 0;
  }

  get walking(): string | undefined {
    return this.#current?.id;
  }

  get draining(): boolean {
    return this.#drain.signal.aborted;
  }

  /** Position in the queue (0 = next), or undefined when not queued. */
  queuePosition(id: string): number | undefined {
    const index = this.#queue.indexOf(id);
    return index < 0 ? undefined : index;
  }

  onFinished(listener: (state: IntentState) => void): void {
    this.#finishedListeners.push(listener);
  }

  /**
   * Records a new intent and queues it. `sync` and `reject` refuse with 409 `busy` while anything walks or waits;
   * `enqueue` refuses only when the queue is full; `interrupt` cancels the walk in flight and goes first.
   */
  async submit(prose: string, source: IntentSource, strategy: SubmitStrategy): Promise<IntentState> {
    if (this.draining) throw new ServiceError('unavailable', 'the daemon is shutting down; send this again after it restarts');
    if ((strategy === 'sync' || strategy === 'reject') && this.busy)
      throw new ServiceError('busy', `Busy: intent ${this.#current?.id ?? this.#queue[0]} is being walked; one walk at a time`, {
        details: { intent_id: this.#current?.id ?? this.#queue[0] },
      });
    if (strategy === 'enqueue' && this.#queue.length >= this.#maxQueued)
      throw new ServiceError('busy', `Busy: ${this.#queue.length} intents are already waiting (DAEMON_MAX_QUEUED_INTENTS)`);
    const state = await this.#book.create(prose, source);
    const submittedIn = captureTraceContext();
    if (submittedIn !== undefined) this.#submittedIn.set(state.id, submittedIn);
    if (strategy === 'interrupt') {
      this.#queue.unshift(state.id);
      if (this.#current) this.#stopCurrent({ reason: `interrupted by a newer message (intent ${state.id})`, by: 'interrupt' });
    } else this.#queue.push(state.id);
    this.#pump();
    return state;
  }

  /** Resolves when the intent has ended (or when the daemon drains). */
  async waitForEnd(id: string): Promise<IntentState | undefined> {
    const state = this.#book.state(id);
    if (state !== undefined && !isTerminal(state.status) && !this.draining)
      await new Promise<void>((resolve) => this.#endWaiters.set(id, [...(this.#endWaiters.get(id) ?? []), resolve]));
    return (await this.#book.get(id))?.state;
  }

  /** Cancels a queued intent at once, or the walking one between steps; 409 when it has already ended. */
  async cancel(id: string, reason: string): Promise<IntentState> {
    const loaded = await this.#book.get(id);
    if (loaded === undefined) throw new ServiceError('not_found', `no intent ${id}`);
    if (isTerminal(loaded.state.status))
      throw new ServiceError('conflict', `intent ${id} has already ended: ${loaded.state.status}`, { details: { status: loaded.state.status } });
    if (this.#current?.id === id) {
      this.#stopCurrent({ reason, by: 'user' });
      await this.#current?.done;
    } else {
      const index = this.#queue.indexOf(id);
      if (index >= 0) this.#queue.splice(index, 1);
      this.#submittedIn.delete(id);
      await this.#book.append(id, 'intent.cancel', { reason, by: 'user' });
      this.#ended(id);
    }
    return (await this.#book.get(id))?.state as IntentState;
  }

  /** Queues every unfinished intent found at start, oldest first, ahead of anything new. */
  resume(ids: readonly string[]): void {
    this.#queue.unshift(...ids.filter((id) => !this.#queue.includes(id)));
    this.#pump();
  }

  /** Stops taking work: the step in flight finishes, the walk stops after it, queued intents stay for the next start. */
  async drain(): Promise<void> {
    this.#drain.abort();
    for (const [id] of this.#endWaiters) this.#ended(id);
    await this.#pumping;
  }

  #stopCurrent(reason: CancelReason): void {
    if (this.#current === undefined) return;
    this.#current.cancelReason = reason;
    this.#current.cancel.abort();
  }

  #pump(): void {
    this.#pumping ??= this.#loop().finally(() => {
      this.#pumping = undefined;
    });
  }

  async #loop(): Promise<void> {
    while (!this.draining) {
      const id = this.#queue.shift();
      if (id === undefined) return;
      const run: Run = { id, cancel: new AbortController(), cancelReason: { reason: 'cancelled', by: 'user' }, done: Promise.resolve() };
      let finish = () => {};
      run.done = new Promise<void>((resolve) => {
        finish = resolve;
      });
      this.#current = run;
      const submittedIn = this.#submittedIn.get(id);
      this.#submittedIn.delete(id);
      try {
        // One span per walk, in the trace of the request that submitted the intent (a new trace for one resumed at start).
        const outcome = await runInTraceContext(submittedIn, () =>
          this.#tracing.span('intent', { attributes: { 'platform.intent.id': id }, root: submittedIn === undefined }, async (span) => {
            const ended = await runIntent(this.#rail, id, { cancel: run.cancel.signal, drain: this.#drain.signal }, () => run.cancelReason);
            span.setAttribute('platform.intent.status', this.#book.state(id)?.status ?? 'unknown');
            return ended;
          }),
        );
        if (outcome === 'stopped') this.#queue.unshift(id);
      } catch (error) {
        // The journal could not be written (a full disk): the intent stays where its journal says, for the next start.
        this.#logger.error({ err: error, intent: id }, 'intent run stopped by an error');
      } finally {
        this.#current = undefined;
        finish();
        this.#ended(id);
      }
    }
  }

  #ended(id: string): void {
    const state = this.#book.state(id);
    if (state !== undefined && isTerminal(state.status)) for (const listener of this.#finishedListeners) listener(state);
    for (const resolve of this.#endWaiters.get(id) ?? []) resolve();
    this.#endWaiters.delete(id);
  }
}
