import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { drained, sseFrame as frame, type SseSink, sseHeartbeat, ssePreamble } from '@platform/kit/http/sse';
import type { Logger } from 'pino';
import { type EventSource, eventsChannel, type StoredEvent } from './event-log.ts';

export interface Subscription {
  readonly id: number;
  /** Forgets the subscriber (its client went away); does not touch the sink. */
  close(): void;
}

/** Subscribes to a NOTIFY channel, as `Database.listen` does on both engines. */
export type Listen = (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>;

export interface EventHubOptions {
  /** The ordered log: the ledger's receipts and batches (ledgerEvents). */
  source: EventSource;
  clock: Clock;
  logger: Logger;
  /** Interval of the `: heartbeat` comment, which keeps proxies from closing a quiet stream. Default 15 s. */
  heartbeatMs?: number;
  /** A live subscriber whose unsent bytes exceed this is dropped. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** Events per query, for live reads and for each replay page. Default 500. */
  pageSize?: number;
  /** Open streams beyond this are refused with 503 `unavailable`. Default 1000. */
  maxSubscribers?: number;
}

interface Subscriber {
  readonly id: number;
  readonly sink: SseSink;
  /** The last event id written to this subscriber: anything at or below it is never written again. */
  cursor: bigint;
  /** Replay done: live fan-out now writes to it. */
  live: boolean;
  readonly gone: AbortController;
}

/** One stored event as an SSE frame: its id, its type as the event name, its payload as the data. */
export function sseFrame(event: StoredEvent): string {
  return frame({ id: event.id, event: event.type, data: event.payload });
}

/**
 * Fans the event log out to SSE subscribers. A single reader follows the log (one query per wake, however
 * many subscribers) and writes each new event to every live subscriber. A subscriber that reconnects with a
 * Last-Event-ID first replays from the table at its own pace, then joins live delivery; its cursor guarantees
 * strictly increasing ids with no gap and no duplicate. Memory per subscriber is bounded: live subscribers
 * that fall more than `maxBufferedBytes` behind are dropped (they reconnect and replay), and a replay reads
 * its next page only once the socket has drained.
 *
 * @example const hub = new EventHub({ db, clock, logger }); await hub.start(database.listen)
 */
export class EventHub {
  readonly #source: EventSource;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #heartbeatMs: number;
  readonly #maxBufferedBytes: number;
  readonly #pageSize: number;
  readonly #maxSubscribers: number;
  readonly #subscribers = new Set<Subscriber>();
  /** The live position: every event up to here has been written to every live subscriber. */
  #head = 0n;
  #nextSubscriberId = 0;
  #started = false;
  readonly #stopping = new AbortController();
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #heartbeats: Promise<void> | undefined;
  #unlisten: (() => Promise<void>) | undefined;

  constructor(options: EventHubOptions) {
    this.#source = options.source;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#heartbeatMs = options.heartbeatMs ?? 15_000;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
    this.#pageSize = options.pageSize ?? 500;
    this.#maxSubscribers = options.maxSubscribers ?? 1000;
  }

  get head(): bigint {
    return this.#head;
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** Listens for the writer's NOTIFY, takes the current end of the log as the live position, starts heartbeats. */
  async start(listen: Listen): Promise<void> {
    // Listen before reading the head, so an event committed in between is either in the head or announced.
    this.#unlisten = await listen(eventsChannel, (payload) => void this.notify(/^\d{1,19}$/.test(payload) ? BigInt(payload) : undefined));
    this.#head = await this.#source.headId();
    this.#started = true;
    this.#heartbeats = this.#heartbeatLoop();
    // A notification that came while the head was being read was ignored: look once more.
    void this.notify();
  }

  /**
   * Reads the events after the live position and fans them out. Wakes that arrive while a read is in flight
   * coalesce into one more read. Resolves once a read begun after this call has finished; never rejects.
   *
   * `headId`, when the caller knows it, is the highest id just committed (the writer's, or a NOTIFY's payload): with
   * nobody subscribed the live position simply moves there, since reading and framing events nobody is sent was
   * two queries and every receipt of every group read back. A later subscriber starts from the same position a
   * read would have reached.
   */
  notify(headId?: bigint): Promise<void> {
    if (!this.#started || this.#stopping.signal.aborted) return Promise.resolve();
    if (headId !== undefined && this.#subscribers.size === 0 && !this.#reading) {
      if (headId > this.#head) this.#head = headId;
      return Promise.resolve();
    }
    if (this.#reading) {
      this.#readAgain = true;
      return this.#reading;
    }
    this.#reading = this.#readLoop();
    return this.#reading;
  }

  /**
   * Opens a stream. Without `lastEventId` it starts live at the head (no history); with one, it replays every
   * event after that id first. An id beyond the end of the log (a reset database, a made-up id) counts as the head.
   * Throws 503 `unavailable` when full or stopped; `openSink` is called only once admitted, so the route can
   * still answer a refusal with an envelope.
   */
  subscribe(lastEventId: bigint | undefined, openSink: () => SseSink): Subscription {
    if (!this.#started || this.#stopping.signal.aborted) throw new ServiceError('unavailable', 'the event stream is not running');
    if (this.#subscribers.size >= this.#maxSubscribers) throw new ServiceError('unavailable', 'too many open event streams; retry later');
    const subscriber: Subscriber = {
      id: ++this.#nextSubscriberId,
      sink: openSink(),
      cursor: this.#head,
      live: lastEventId === undefined,
      gone: new AbortController(),
    };
    this.#subscribers.add(subscriber);
    subscriber.sink.write(ssePreamble);
    if (lastEventId !== undefined) void this.#replay(subscriber, lastEventId);
    return { id: subscriber.id, close: () => this.#remove(subscriber) };
  }

  /** Ends every stream (clients reconnect elsewhere with their Last-Event-ID), stops heartbeats and listening. */
  async stop(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    this.#stopping.abort();
    for (const subscriber of [...this.#subscribers]) {
      this.#remove(subscriber);
      // A stream with unsent bytes would never finish ending if its client stopped reading, and hold up server close.
      if (subscriber.sink.writableLength > 0) subscriber.sink.destroy();
      else subscriber.sink.end();
    }
    await this.#unlisten?.();
    await this.#heartbeats;
    await this.#reading;
  }

  async #readLoop(): Promise<void> {
    try {
      do {
        this.#readAgain = false;
        await this.#readNew();
      } while (this.#readAgain && !this.#stopping.signal.aborted);
    } catch (error) {
      // The next notification or heartbeat reads again from the same position: events arrive late, never lost.
      this.#logger.warn({ err: error }, 'reading new events failed');
    } finally {
      this.#reading = undefined;
    }
  }

  async #readNew(): Promise<void> {
    for (;;) {
      const events = await this.#source.readAfter(this.#head, this.#pageSize);
      if (this.#stopping.signal.aborted) return;
      this.#fanOut(events);
      if (events.length < this.#pageSize) return;
    }
  }

  #fanOut(events: StoredEvent[]): void {
    const last = events.at(-1);
    if (!last) return;
    const frames = events.map(sseFrame);
    const all = frames.join('');
    for (const subscriber of this.#subscribers) {
      if (!subscriber.live) continue;
      // Normally the whole batch; less when the subscriber's replay already read ahead of the live position.
      const from = events.findIndex((event) => event.id > subscriber.cursor);
      if (from < 0) continue;
      subscriber.cursor = last.id;
      this.#send(subscriber, from === 0 ? all : frames.slice(from).join(''));
    }
    this.#head = last.id;
  }

  async #replay(subscriber: Subscriber, lastEventId: bigint): Promise<void> {
    try {
      // The id may come from an instance further along the log than this one: judge it against the log's end as it
      // stands now, not against this hub's head once caught up. Events committed while catching up are news to this
      // subscriber, and a fan-out that ran before it went live skipped it; taking the caught-up head as its cursor
      // lost them (a live event missed by a client that came back with an id past the log).
      if (lastEventId > this.#head) {
        const end = await this.#source.headId();
        void this.notify();
        subscriber.cursor = lastEventId < end ? lastEventId : end;
      } else subscriber.cursor = lastEventId;
      while (!subscriber.gone.signal.aborted) {
        // Nothing is awaited between this check and going live, so no fan-out can slip in between: the next
        // one starts after the head, at or before the cursor, and the cursor filters what replay already wrote.
        if (subscriber.cursor >= this.#head) {
          subscriber.live = true;
          return;
        }
        const events = await this.#source.readAfter(subscriber.cursor, this.#pageSize);
        const last = events.at(-1);
        if (subscriber.gone.signal.aborted) return;
        if (!last) {
          // Only possible if rows below the head vanished; going live beats spinning.
          subscriber.live = true;
          return;
        }
        subscriber.cursor = last.id;
        // Replay is paced by the socket rather than dropped: the next page is read only once this one has drained.
        if (!this.#send(subscriber, events.map(sseFrame).join(''))) await drained(subscriber.sink, subscriber.gone.signal);
      }
    } catch (error) {
      // The client reconnects with the last id it got and the replay resumes from there.
      this.#logger.warn({ err: error, subscriber: subscriber.id }, 'stream replay failed; ending the stream');
      this.#remove(subscriber);
      subscriber.sink.end();
    }
  }

  /** Writes to one subscriber and drops it if it is live and too far behind. Returns `write`'s answer. */
  #send(subscriber: Subscriber, text: string): boolean {
    const flowing = subscriber.sink.write(text);
    const buffered = subscriber.sink.writableLength;
    if (subscriber.live && buffered > this.#maxBufferedBytes) {
      this.#logger.info({ subscriber: subscriber.id, bufferedBytes: buffered, lastEventId: String(subscriber.cursor) }, 'slow stream subscriber dropped');
      this.#remove(subscriber);
      subscriber.sink.destroy();
    }
    return flowing;
  }

  #remove(subscriber: Subscriber): void {
    this.#subscribers.delete(subscriber);
    subscriber.gone.abort();
  }

  async #heartbeatLoop(): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted) {
      await this.#clock.sleep(this.#heartbeatMs, signal);
      if (signal.aborted) return;
      for (const subscriber of this.#subscribers) this.#send(subscriber, sseHeartbeat);
      // Notifications are hints that can be lost (a LISTEN connection that dropped): look for missed events too.
      void this.notify();
    }
  }
}
