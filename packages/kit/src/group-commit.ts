/**
 * Group commit for a hot path's writes, or for the requests one service makes to another: items submitted while
 * earlier batches are in flight wait and go together in a later one, so a busy service pays one round trip, one
 * statement and one commit (or one request) for many calls. A batch leaves at the end of the event loop's turn
 * (setImmediate, no timer): a quiet service sends each item at once, and every request read in the same turn (PGlite
 * blocks the loop while a statement runs, so many arrive together) shares one batch instead of the first going alone.
 *
 * Items may carry a key (the gateway: an actor's day). Batches run in parallel up to `maxInFlight`, but an item whose
 * key is in a batch still in flight waits for it, so items of one key are applied in submission order: an actor's
 * booking lands before its next reservation, while other actors' calls go ahead. Items without a key never wait for
 * one another (the marketplace's holds at settlement). `run` answers one result per item, in order; a batch whose run
 * fails, or answers another number of results, fails every item of it.
 *
 * With `lingerMs`, an item nobody waits on (`urgent` says no: the gateway's booking of a call already answered) waits up
 * to that long for others to share its batch: on a service at a moderate rate every item otherwise goes alone, and a
 * commit per item cost PostgreSQL three times the CPU of a batched one (the gateway at 1,000 calls/s kept more than
 * a core of PostgreSQL busy). An urgent item, or a full batch, still leaves at the end of the turn, taking whatever
 * lingers with it, so nothing a caller waits for is delayed.
 *
 * With `span` named, each batch runs in a span of that name in the trace of its first sampled item, linked to the
 * spans its other items were submitted in (OpenTelemetry's way to draw a batch: one parent, a link to each of the rest), so a
 * call to another service carried in a batch is found from every trace that asked for it; without, batches add
 * nothing to a trace and cost nothing for it.
 *
 * @example const ops = new GroupCommit((items) => apply(items), { keyOf: (op) => op.actor, maxBatch: 512, maxInFlight: 4 })
 */
import { type Context, captureTraceContext, inSpan, runInTraceContext, sampledIn } from './observability/tracing.ts';

export interface GroupCommitOptions<In> {
  /** Items of one key are applied in submission order; without, items never wait for one another. */
  keyOf?: (item: In) => string;
  maxBatch: number;
  maxInFlight: number;
  /** The name of each batch's span; without, batches are not traced. */
  span?: string;
  /** How long an item that is not `urgent` may wait for others to share its batch; without, none waits. */
  lingerMs?: number;
  /** Whether a caller waits on the item (it leaves at the end of the turn); all are, without. */
  urgent?: (item: In) => boolean;
  /** Runs `run` after `ms` and answers a cancel: setTimeout, unless a test schedules by hand. */
  timer?: (run: () => void, ms: number) => () => void;
}

const realTimer = (run: () => void, ms: number) => {
  const timeout = setTimeout(run, ms);
  return () => clearTimeout(timeout);
};

interface Queued<In, Out> {
  item: In;
  key: string | undefined;
  /** The trace context it was submitted in, when the batches are traced (`span`). */
  submittedIn: Context | undefined;
  resolve: (out: Out) => void;
  reject: (error: unknown) => void;
  /** A caller waits on it: it leaves at the end of the turn. */
  urgent: boolean;
  /** When it was submitted (performance.now()), for how long it may still linger. */
  at: number;
}

export class GroupCommit<In, Out> {
  readonly #run: (items: In[]) => Promise<Out[]>;
  readonly #keyOf: ((item: In) => string) | undefined;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  readonly #span: string | undefined;
  readonly #lingerMs: number;
  readonly #urgent: ((item: In) => boolean) | undefined;
  readonly #timer: (run: () => void, ms: number) => () => void;
  /** Queued items a caller waits on: while there are any, the next flush is at the end of the turn. */
  #urgentQueued = 0;
  /** Cancels the lingering flush, when one is scheduled. */
  #cancelLinger: (() => void) | undefined;
  #queue: Array<Queued<In, Out>> = [];
  /** Keys of the batches in flight. */
  readonly #busy = new Set<string>();
  #inFlight = 0;
  #flushScheduled = false;
  #idleWaiters: Array<() => void> = [];

  constructor(run: (items: In[]) => Promise<Out[]>, options: GroupCommitOptions<In>) {
    this.#run = run;
    this.#keyOf = options.keyOf;
    this.#maxBatch = options.maxBatch;
    this.#maxInFlight = options.maxInFlight;
    this.#span = options.span;
    this.#lingerMs = options.lingerMs ?? 0;
    this.#urgent = options.urgent;
    this.#timer = options.timer ?? realTimer;
  }

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      const submittedIn = this.#span === undefined ? undefined : captureTraceContext();
      const urgent = this.#lingerMs <= 0 || this.#urgent === undefined || this.#urgent(item);
      this.#queue.push({ item, key: this.#keyOf?.(item), submittedIn, resolve, reject, urgent, at: urgent ? 0 : performance.now() });
      if (urgent) this.#urgentQueued++;
      this.#scheduleFlush();
    });
  }

  /** Resolves once nothing is queued or in flight (everything submitted so far is committed or failed). */
  idle(): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return Promise.resolve();
    // Someone waits now (a shutdown): what lingers leaves at the end of the turn.
    if (this.#cancelLinger !== undefined) this.#scheduleFlush(true);
    return new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  /** At the end of the turn when a caller waits (`atTurnEnd`, or an urgent item queued) or a batch is full; else lingering. */
  #scheduleFlush(atTurnEnd = false): void {
    if (this.#flushScheduled || this.#queue.length === 0) return;
    if (!atTurnEnd && this.#urgentQueued === 0 && this.#queue.length < this.#maxBatch) {
      this.#linger();
      return;
    }
    this.#cancelLinger?.();
    this.#cancelLinger = undefined;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  /** Flushes once the oldest queued item has waited `lingerMs`, unless an urgent one brings it forward. */
  #linger(): void {
    if (this.#cancelLinger !== undefined) return;
    const oldest = this.#queue[0] as Queued<In, Out>;
    const wait = Math.max(0, oldest.at + this.#lingerMs - performance.now());
    this.#cancelLinger = this.#timer(() => {
      this.#cancelLinger = undefined;
      this.#flush();
      // Items left behind a key in flight are flushed when that batch ends.
    }, wait);
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch = this.#takeBatch();
      if (batch.length === 0) return;
      const keys = new Set(batch.flatMap((entry) => (entry.key === undefined ? [] : [entry.key])));
      for (const key of keys) this.#busy.add(key);
      this.#inFlight++;
      this.#runBatch(batch)
        .then(
          (outs) => {
            if (outs.length !== batch.length) {
              const error = new Error(`a batch of ${batch.length} items answered ${outs.length} results`);
              for (const entry of batch) entry.reject(error);
              return;
            }
            for (const [index, entry] of batch.entries()) entry.resolve(outs[index] as Out);
          },
          (error: unknown) => {
            for (const entry of batch) entry.reject(error);
          },
        )
        .finally(() => {
          for (const key of keys) this.#busy.delete(key);
          this.#inFlight--;
          this.#scheduleFlush();
          if (this.#queue.length === 0 && this.#inFlight === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
        });
    }
  }

  #runBatch(batch: Array<Queued<In, Out>>): Promise<Out[]> {
    const items = batch.map((entry) => entry.item);
    // Untraced batches, and every batch while tracing is off (nothing was captured).
    if (this.#span === undefined || batch[0]?.submittedIn === undefined) return this.#run(items);
    const span = this.#span;
    // The parent is the first item whose trace is sampled, so that under sampling (one trace in ten) the batch is
    // recorded whenever any of its items is, and linked to the others' spans.
    const parent = batch.find((entry) => sampledIn(entry.submittedIn)) ?? batch[0];
    const links = batch.filter((entry) => entry !== parent).map((entry) => entry.submittedIn);
    return runInTraceContext(parent?.submittedIn, () => inSpan(span, { links, attributes: { 'platform.batch.items': batch.length } }, () => this.#run(items)));
  }

  /** The queued items, in order, whose key no batch in flight holds; the others keep their place. */
  #takeBatch(): Array<Queued<In, Out>> {
    const batch: Array<Queued<In, Out>> = [];
    const waiting: Array<Queued<In, Out>> = [];
    for (const entry of this.#queue) {
      if (batch.length < this.#maxBatch && (entry.key === undefined || !this.#busy.has(entry.key))) batch.push(entry);
      else waiting.push(entry);
    }
    this.#queue = waiting;
    for (const entry of batch) if (entry.urgent) this.#urgentQueued--;
    return batch;
  }
}
