import { StringDecoder } from 'node:string_decoder';
import type { Usage } from '../metering/meter.ts';
import { usageOf } from './usage.ts';

/** What one server-sent event of a chat-completion stream means to the meter. */
export interface SseEvent {
  /** The event's text as received, terminator included, to forward byte for byte. */
  raw: string;
  usage: Usage | undefined;
  /** A chunk with `choices: []` and a usage object: the trailing usage chunk and nothing else. */
  usageOnly: boolean;
  /** `data: {"error": …}`: the upstream failed mid-stream. */
  error: boolean;
  /** `data: [DONE]`: the end of the answer. */
  done: boolean;
}

// Events end at a blank line; upstreams write \n or \r\n line ends (a lone \r is not supported).
const eventEnd = /\r?\n\r?\n/;
// Only events that may carry a usage object are parsed; the rest are forwarded without being looked at.
const mayCarryUsage = /"usage"\s*:\s*\{/;
const mayCarryError = /^data:\s*\{\s*"error"/m;
const doneMarker = /^data:\s*\[DONE\]\s*$/m;

function dataOf(raw: string): string {
  let data = '';
  for (const line of raw.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === '' ? value : `${data}\n${value}`;
  }
  return data;
}

function describe(raw: string): SseEvent {
  const carriesUsage = mayCarryUsage.test(raw);
  const carriesError = mayCarryError.test(raw);
  if (!carriesUsage && !carriesError) return { raw, usage: undefined, usageOnly: false, error: false, done: doneMarker.test(raw) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(dataOf(raw));
  } catch {
    return { raw, usage: undefined, usageOnly: false, error: false, done: false };
  }
  const choices = (parsed as { choices?: unknown }).choices;
  const usage = carriesUsage ? usageOf(parsed) : undefined;
  return {
    raw,
    usage,
    usageOnly: usage !== undefined && Array.isArray(choices) && choices.length === 0,
    error: typeof (parsed as { error?: unknown }).error === 'object',
    done: false,
  };
}

/**
 * Splits a byte stream of server-sent events into whole events as they complete. Bytes of an event not yet
 * complete wait here (the only buffering), and a UTF-8 character split across chunks is joined first.
 */
export class SseEventSplitter {
  readonly #decoder = new StringDecoder('utf8');
  #pending = '';

  push(chunk: Buffer): SseEvent[] {
    this.#pending += this.#decoder.write(chunk);
    const events: SseEvent[] = [];
    let match = eventEnd.exec(this.#pending);
    while (match) {
      const end = match.index + match[0].length;
      events.push(describe(this.#pending.slice(0, end)));
      this.#pending = this.#pending.slice(end);
      match = eventEnd.exec(this.#pending);
    }
    return events;
  }

  /** Characters of an event still incomplete; the relay bounds it (an upstream that never ends an event is broken). */
  get pendingChars(): number {
    return this.#pending.length;
  }

  /** Whatever arrived after the last complete event (an upstream that ended without a final blank line). */
  rest(): string {
    return this.#pending + this.#decoder.end();
  }
}
