import { type SseSink, sseFrame } from '@platform/kit/http/sse';

/** Where a held frame sits in its intent's journal: envelopes by their seq, ephemeral events after one. */
export interface FrameOrder {
  seq: number;
  ephemeral: boolean;
}

interface Limits {
  /** Bytes a subscriber may have waiting in its socket's buffer; frames that would pass it are dropped. */
  bytes: number;
  onDrop: () => void;
}

/**
 * One SSE subscriber with a bounded buffer: the socket's own write buffer, capped at `bytes`. Frames go to the
 * socket while they fit; a frame that would pass the cap is dropped and counted, and once the socket drains the
 * client gets a `dropped` event saying how many it missed. A slow reader therefore costs at most `bytes` of memory,
 * never more. The subscriber keeps its stream's position, the id of the last frame it wrote (or where it started),
 * so the events it writes itself carry an id too: the `dropped` event's is the last one the client really has, and
 * a reconnect with it replays what was dropped.
 */
export class Subscriber {
  readonly #sink: SseSink;
  readonly #limits: Limits;
  #closed = false;
  #ending = false;
  #waitingForDrain = false;
  #unreported = 0;
  #position: string;
  dropped = 0;
  /** While holding, live frames wait here (with their id and order) until `release`. */
  #held: { frame: string; id: string; order: FrameOrder | undefined }[] | undefined;
  #heldBytes = 0;
  readonly #closeListeners: (() => void)[] = [];

  /** `position`: the id the stream starts from, until a frame with an id is written. */
  constructor(sink: SseSink, limits: Limits, position: string) {
    this.#sink = sink;
    this.#limits = limits;
    this.#position = position;
    sink.once('close', () => this.close());
  }

  /** It has dropped events and waits for its socket to drain. */
  get congested(): boolean {
    return this.#waitingForDrain;
  }

  /** Bytes waiting for this subscriber: in its socket's buffer, and held during a replay. */
  get bufferedBytes(): number {
    return this.#sink.writableLength + this.#heldBytes;
  }

  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#closeListeners.push(listener);
  }

  hold(): void {
    this.#held = [];
  }

  /** Ends holding: frames published meanwhile go out unless the replay already covered them. */
  release(lastReplayedSeq: number): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    this.#heldBytes = 0;
    for (const { frame, id, order } of held) {
      if (order === undefined || order.seq > lastReplayedSeq || (order.ephemeral && order.seq === lastReplayedSeq)) this.#write(frame, id);
    }
    this.#maybeEnd();
  }

  /** The preamble, the snapshot and the replay: written whatever the cap (they are bounded by one intent's journal). */
  sendNow(frame: string, id?: string): void {
    if (this.#closed) return;
    this.#sink.write(frame);
    if (id !== undefined) this.#position = id;
  }

  /** A frame carrying `id`, written if it fits. */
  send(frame: string, id: string, order?: FrameOrder): void {
    if (this.#closed) return;
    if (this.#held !== undefined) {
      if (this.#heldBytes + frame.length > this.#limits.bytes) {
        this.#drop();
        return;
      }
      this.#held.push({ frame, id, order });
      this.#heldBytes += frame.length;
      return;
    }
    this.#write(frame, id);
  }

  /** A heartbeat only goes to an idle socket: one with data waiting shows the connection is alive anyway. */
  heartbeat(frame: string): void {
    if (this.#closed || this.#held !== undefined || this.#sink.writableLength > 0) return;
    this.#sink.write(frame);
  }

  /** Ends the stream after what is buffered (an intent's terminal event). */
  endWhenFlushed(): void {
    this.#ending = true;
    this.#maybeEnd();
  }

  /** Forgets the subscriber; its socket is ended, or destroyed when it still has unread data (a reader that stopped). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#sink.writableLength > 0) this.#sink.destroy();
    else this.#sink.end();
    for (const listener of this.#closeListeners.splice(0)) listener();
  }

  #write(frame: string, id: string): void {
    if (this.#sink.writableLength + frame.length > this.#limits.bytes) {
      this.#drop();
      if (!this.#waitingForDrain) {
        this.#waitingForDrain = true;
        this.#sink.once('drain', () => this.#drained());
      }
      return;
    }
    this.#sink.write(frame);
    this.#position = id;
  }

  #drop(): void {
    this.dropped++;
    this.#unreported++;
    this.#limits.onDrop();
  }

  #drained(): void {
    this.#waitingForDrain = false;
    if (this.#closed) return;
    if (this.#unreported > 0) {
      const count = this.#unreported;
      this.#unreported = 0;
      this.#sink.write(sseFrame({ id: this.#position, event: 'dropped', data: { count, total: this.dropped } }));
    }
    this.#maybeEnd();
  }

  #maybeEnd(): void {
    if (!this.#ending || this.#closed || this.#held !== undefined || this.#waitingForDrain) return;
    // end() sends what is buffered first, then closes.
    this.#closed = true;
    this.#sink.end();
    for (const listener of this.#closeListeners.splice(0)) listener();
  }
}
