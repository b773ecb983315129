import type { Clock } from '@platform/kit/clock';
import type { EventBroker } from '../events/event-broker.ts';
import { ReplyScanner } from '../llm/reply-scanner.ts';
import type { ContentReceiver } from '../llm/streamed-answer.ts';

/** The live event of a chat answer still being written; the turn's `say` replaces it. */
export const partialAnswerEvent = 'say.partial';

/** At most ten previews a second: smooth to read, and a few kilobytes a second even for a long answer. */
export const partialAnswerIntervalMs = 100;

/**
 * Shows a chat turn's reply while the model is still writing it: reads the `reply` member out of the streamed JSON
 * answer and publishes the text so far as `say.partial` on the unfiltered stream (transient: no id, no replay, never
 * in the transcript). Each event carries all the text so far, so one the broker drops for a slow reader is made good
 * by the next; they are at most one per `intervalMs` (the clock's), the last of a burst sent when the interval ends,
 * so a long answer costs a few frames a second and not one per token. A retry (a broken stream, or a structured
 * answer asked once more) starts the text again and says so at once with an empty text and the next `attempt`.
 */
export class ReplyPreview implements ContentReceiver {
  readonly #broker: EventBroker;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #ids: { conversation_id: string; reply_to: number };
  #scanner = new ReplyScanner('reply');
  #attempt = 0;
  #shown = '';
  #shownAt = Number.NEGATIVE_INFINITY;
  #pending: AbortController | undefined;
  #closed = false;

  /** `replyTo` is the seq of the transcript entry the turn answers (the person's message, or the alarm's notice). */
  constructor(options: { broker: EventBroker; clock: Clock; intervalMs: number; conversationId: string; replyTo: number }) {
    this.#broker = options.broker;
    this.#clock = options.clock;
    this.#intervalMs = options.intervalMs;
    this.#ids = { conversation_id: options.conversationId, reply_to: options.replyTo };
  }

  restart(): void {
    if (this.#closed) return;
    this.#scanner = new ReplyScanner('reply');
    this.#attempt++;
    this.#pending?.abort();
    this.#pending = undefined;
    // What the last attempt showed is taken back now, not when the new attempt's first words arrive.
    if (this.#shown !== '') this.#publish('');
  }

  append(piece: string): void {
    if (this.#closed) return;
    this.#scanner.push(piece);
    if (this.#scanner.text === this.#shown || this.#pending !== undefined) return;
    const waitMs = this.#shownAt + this.#intervalMs - this.#clock.now().getTime();
    if (waitMs <= 0) {
      this.#publish(this.#scanner.text);
      return;
    }
    const pending = new AbortController();
    this.#pending = pending;
    void this.#clock.sleep(waitMs, pending.signal).then(() => {
      if (pending.signal.aborted || this.#closed) return;
      this.#pending = undefined;
      if (this.#scanner.text !== this.#shown) this.#publish(this.#scanner.text);
    });
  }

  /** The turn is over: its `say` (or notice) is the answer now, and nothing more is previewed. */
  close(): void {
    this.#closed = true;
    this.#pending?.abort();
  }

  #publish(text: string): void {
    this.#pending = undefined;
    this.#shown = text;
    this.#shownAt = this.#clock.now().getTime();
    this.#broker.publishTransient({ event: partialAnswerEvent, data: { ...this.#ids, attempt: this.#attempt, text } });
  }
}
