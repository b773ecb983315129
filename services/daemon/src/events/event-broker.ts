import { randomBytes } from 'node:crypto';
import type { Clock } from '@platform/kit/clock';
import { type SseSink, sseFrame, sseHeartbeat, ssePreamble } from '@platform/kit/http/sse';
import { Subscriber } from './subscriber.ts';

/** One event of the live transcript. Intent events carry the intent id; journal envelopes also their seq. */
export interface DaemonEvent {
  event: string;
  data: Record<string, unknown>;
  intentId?: string;
  /** The journal position, for envelopes; ephemeral events (status, say, notice) have none. */
  seq?: number;
}

export const terminalEvents: ReadonlySet<string> = new Set(['intent.attest', 'intent.fail', 'intent.cancel']);

export interface BrokerOptions {
  clock: Clock;
  heartbeatMs: number;
  /** Bytes a subscriber may have waiting before new events are dropped. */
  bufferBytes: number;
  maxSubscribers: number;
  /** Recent transcript events kept for Last-Event-ID on the unfiltered stream. */
  recentEvents?: number;
  /** Told of each event a subscriber lost (`daemon_sse_dropped_events_total`). */
  onDropped?: () => void;
}

export interface BrokerStats {
  subscribers: number;
  intent_subscribers: number;
  /** Events lost by subscribers that fell behind, since start. */
  dropped_events: number;
  /** Subscribers that lost events and wait for their socket to drain. */
  congested_subscribers: number;
  /** Bytes waiting in all subscribers' buffers, and in the fullest one. */
  buffered_bytes: number;
  largest_buffer_bytes: number;
  buffer_limit_bytes: number;
}

/**
 * Fans the live transcript out to SSE subscribers. Each subscriber has a bounded buffer (`bufferBytes` of unsent
 * data): one whose socket stops taking data keeps its connection but loses the events that do not fit (counted, and
 * announced with a `dropped` event once it drains), so a slow reader never grows this process's memory. Every event has an
 * id a client can resume from. Intent streams use the journal seq (`12`, or `12.3` for the third ephemeral event after
 * envelope 12), so a reconnect replays from the journal itself; the unfiltered stream uses `<boot>-<n>` and replays
 * from the last `recentEvents` in memory, and what it does not keep (a `say.partial`, the `missed_events` notice)
 * carries the position of the last event it keeps (`<boot>-<n>.<k>`, `<boot>-<n>`), so resuming from it replays what
 * came after that.
 */
export class EventBroker {
  readonly #clock: Clock;
  readonly #options: Required<BrokerOptions>;
  readonly #all = new Set<Subscriber>();
  readonly #byIntent = new Map<string, Set<Subscriber>>();
  /** Per intent: the last journal seq published and how many ephemeral events followed it. */
  readonly #positions = new Map<string, { seq: number; after: number }>();
  readonly #recent: { n: number; frame: string }[] = [];
  readonly #boot = randomBytes(4).toString('hex');
  #counter = 0;
  /** Transient events since the last kept one: the `<k>` of their ids. */
  #transients = 0;
  #dropped = 0;
  readonly #stopping = new AbortController();
  readonly #heartbeats: Promise<void>;

  constructor(options: BrokerOptions) {
    this.#clock = options.clock;
    this.#options = { recentEvents: 1024, onDropped: () => {}, ...options };
    this.#heartbeats = this.#heartbeatLoop();
  }

  get subscriberCount(): number {
    let count = this.#all.size;
    for (const set of this.#byIntent.values()) count += set.size;
    return count;
  }

  stats(): BrokerStats {
    const every = [...this.#all, ...[...this.#byIntent.values()].flatMap((set) => [...set])];
    const sizes = every.map((subscriber) => subscriber.bufferedBytes);
    return {
      subscribers: every.length,
      intent_subscribers: every.length - this.#all.size,
      dropped_events: this.#dropped,
      congested_subscribers: every.filter((subscriber) => subscriber.congested).length,
      buffered_bytes: sizes.reduce((sum, size) => sum + size, 0),
      largest_buffer_bytes: Math.max(0, ...sizes),
      buffer_limit_bytes: this.#options.bufferBytes,
    };
  }

  /** Publishes to the unfiltered stream and, for intent events, to that intent's stream. */
  publish(event: DaemonEvent): void {
    const n = ++this.#counter;
    this.#transients = 0;
    const streamId = this.#streamId(n);
    const frame = sseFrame({ id: streamId, event: event.event, data: this.#payload(event) });
    this.#recent.push({ n, frame });
    if (this.#recent.length > this.#options.recentEvents) this.#recent.shift();
    for (const subscriber of this.#all) subscriber.send(frame, streamId);
    if (event.intentId === undefined) return;
    const position = this.#positions.get(event.intentId) ?? { seq: 0, after: 0 };
    if (event.seq !== undefined) Object.assign(position, { seq: event.seq, after: 0 });
    else position.after++;
    this.#positions.set(event.intentId, position);
    const subscribers = this.#byIntent.get(event.intentId);
    if (subscribers === undefined) return;
    const id = event.seq !== undefined ? String(event.seq) : `${position.seq}.${position.after}`;
    const intentFrame = sseFrame({ id, event: event.event, data: this.#payload(event) });
    const order = { seq: position.seq, ephemeral: event.seq === undefined };
    for (const subscriber of subscribers) {
      subscriber.send(intentFrame, id, order);
      if (terminalEvents.has(event.event)) subscriber.endWhenFlushed();
    }
  }

  /**
   * Publishes a passing event to the unfiltered stream only, not kept for a Last-Event-ID replay. For what the next
   * event supersedes (a partial answer carries all its text so far), so it never pushes transcript events out of the
   * replay buffer, and a resume never replays a preview the final answer has already replaced. Its id,
   * `<boot>-<n>.<k>`, resumes after the last kept event `<n>`.
   */
  publishTransient(event: { event: string; data: Record<string, unknown> }): void {
    const id = `${this.#streamId(this.#counter)}.${++this.#transients}`;
    const frame = sseFrame({ id, event: event.event, data: event.data });
    for (const subscriber of this.#all) subscriber.send(frame, id);
  }

  /** The unfiltered stream's id of kept event `n` (0: before the first). */
  #streamId(n: number): string {
    return `${this.#boot}-${n}`;
  }

  #payload(event: DaemonEvent): Record<string, unknown> {
    return event.intentId === undefined ? event.data : { intent_id: event.intentId, ...event.data };
  }

  /** Whether a new stream would be admitted now (checked before the response is taken over, so a refusal is an envelope). */
  canSubscribe(): boolean {
    return !this.#full();
  }

  /**
   * Opens the unfiltered stream. With a Last-Event-ID of this boot still in memory it first replays what followed;
   * otherwise (older, from before a restart, or not one of this stream's ids) it starts with a `notice` that events
   * were missed, whose id is the stream's position now. Undefined when the subscriber limit is reached.
   */
  subscribeAll(sink: SseSink, lastEventId: string | undefined): Subscriber | undefined {
    if (this.#full()) return undefined;
    const now = this.#streamId(this.#counter);
    const subscriber = this.#subscriber(sink, now);
    subscriber.sendNow(ssePreamble);
    if (lastEventId !== undefined) {
      const after = this.#keptAfter(lastEventId);
      if (after !== undefined) {
        for (const entry of this.#recent) if (entry.n > after) subscriber.send(entry.frame, this.#streamId(entry.n));
      } else
        subscriber.send(
          sseFrame({
            id: now,
            event: 'notice',
            data: { kind: 'missed_events', message: 'events since your Last-Event-ID are no longer in memory; intent streams replay from the journal' },
          }),
          now,
        );
    }
    this.#all.add(subscriber);
    subscriber.onClose(() => this.#all.delete(subscriber));
    return subscriber;
  }

  /**
   * The kept event a Last-Event-ID of the unfiltered stream names (`<boot>-<n>`, or `<boot>-<n>.<k>` for a transient
   * event after it), when every event after it is still in memory; undefined otherwise.
   */
  #keptAfter(lastEventId: string): number | undefined {
    const match = /^([0-9a-f]{8})-(\d{1,15})(?:\.\d{1,15})?$/.exec(lastEventId);
    if (!match || match[1] !== this.#boot) return undefined;
    const after = Number(match[2]);
    const oldest = this.#recent[0]?.n ?? this.#counter + 1;
    return after >= oldest - 1 && after <= this.#counter ? after : undefined;
  }

  /**
   * Opens one intent's stream in holding mode: live events wait while the caller writes the snapshot and the replay
   * from the journal (`sendNow`), then `release(subscriber, lastReplayedSeq)` lets through what is newer. `position`
   * is the id the stream starts from (the snapshot's).
   */
  subscribeIntent(intentId: string, sink: SseSink, position: string): Subscriber | undefined {
    if (this.#full()) return undefined;
    const subscriber = this.#subscriber(sink, position);
    subscriber.hold();
    subscriber.sendNow(ssePreamble);
    const set = this.#byIntent.get(intentId) ?? new Set();
    set.add(subscriber);
    this.#byIntent.set(intentId, set);
    subscriber.onClose(() => {
      set.delete(subscriber);
      if (set.size === 0 && this.#byIntent.get(intentId) === set) this.#byIntent.delete(intentId);
    });
    return subscriber;
  }

  /** The id an ephemeral event of this intent would carry now, for a snapshot. */
  position(intentId: string): number {
    return this.#positions.get(intentId)?.seq ?? 0;
  }

  /** Forgets the per-intent position of a finished intent (its stream replays from the journal). */
  forget(intentId: string): void {
    if (!this.#byIntent.has(intentId)) this.#positions.delete(intentId);
  }

  /** Ends every stream and the heartbeats. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    for (const subscriber of [...this.#all, ...[...this.#byIntent.values()].flatMap((set) => [...set])]) subscriber.close();
    await this.#heartbeats;
  }

  #subscriber(sink: SseSink, position: string): Subscriber {
    return new Subscriber(
      sink,
      {
        bytes: this.#options.bufferBytes,
        onDrop: () => {
          this.#dropped++;
          this.#options.onDropped();
        },
      },
      position,
    );
  }

  #full(): boolean {
    return this.#stopping.signal.aborted || this.subscriberCount >= this.#options.maxSubscribers;
  }

  async #heartbeatLoop(): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted) {
      await this.#clock.sleep(this.#options.heartbeatMs, signal);
      if (signal.aborted) return;
      for (const subscriber of this.#all) subscriber.heartbeat(sseHeartbeat);
      for (const set of this.#byIntent.values()) for (const subscriber of set) subscriber.heartbeat(sseHeartbeat);
    }
  }
}
