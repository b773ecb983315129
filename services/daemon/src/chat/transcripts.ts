import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '@platform/kit/clock';
import type { EventBroker } from '../events/event-broker.ts';
import { appendLineDurably, ensureDirectory, readJsonLines, repairTail } from '../files/durable-files.ts';
import { KeyedQueue } from '../keyed-queue.ts';

export type TranscriptRole = 'user' | 'assistant' | 'status' | 'notice';

export interface TranscriptEntry {
  seq: number;
  at: string;
  role: TranscriptRole;
  text: string;
  intent_id?: string;
}

interface Header {
  conversation_id: string;
  created_at: string;
}

interface Conversation {
  id: string;
  path: string;
  nextSeq: number;
  updatedAt: string;
}

/** The live event each role becomes: the assistant's words are `say`, progress is `status`. */
const eventOfRole: Record<TranscriptRole, string> = { user: 'message', assistant: 'say', status: 'status', notice: 'notice' };

/**
 * Chat transcripts: one JSON-lines file per conversation in `conversations/`, named by the SHA-256 of the
 * conversation id (ids are free text; names must be safe), the first line naming the id. Each entry is appended and
 * fsynced before it is acknowledged and published; a torn last line left by a crash is cut before the next append.
 * Appending keeps a turn O(1), which rewriting a whole file through a temporary copy would not.
 */
export class Transcripts {
  readonly #root: string;
  readonly #clock: Clock;
  readonly #broker: EventBroker;
  readonly #open = new Map<string, Promise<Conversation>>();
  /** Appends to one conversation are serialised so seq follows file order. */
  readonly #appends = new KeyedQueue();

  constructor(root: string, clock: Clock, broker: EventBroker) {
    this.#root = root;
    this.#clock = clock;
    this.#broker = broker;
  }

  async init(): Promise<void> {
    await ensureDirectory(this.#root);
  }

  #path(id: string): string {
    return join(this.#root, `${createHash('sha256').update(id, 'utf8').digest('hex')}.jsonl`);
  }

  #conversation(id: string): Promise<Conversation> {
    let opened = this.#open.get(id);
    if (opened === undefined) {
      opened = this.#load(id);
      this.#open.set(id, opened);
      opened.catch(() => this.#open.delete(id));
    }
    return opened;
  }

  async #load(id: string): Promise<Conversation> {
    const path = this.#path(id);
    await repairTail(path);
    const lines = await readJsonLines<Header | TranscriptEntry>(path);
    const now = this.#clock.now().toISOString();
    if (lines.length === 0) await appendLineDurably(path, JSON.stringify({ conversation_id: id, created_at: now } satisfies Header));
    const last = lines.at(-1) as TranscriptEntry | undefined;
    return { id, path, nextSeq: (last?.seq ?? 0) + 1, updatedAt: last?.at ?? now };
  }

  /** Appends one entry durably, then publishes it on the live transcript. */
  async append(conversationId: string, entry: { role: TranscriptRole; text: string; intent_id?: string }): Promise<TranscriptEntry> {
    const conversation = await this.#conversation(conversationId);
    const written = await this.#appends.run(conversationId, async () => {
      const full: TranscriptEntry = { seq: conversation.nextSeq, at: this.#clock.now().toISOString(), ...entry };
      await appendLineDurably(conversation.path, JSON.stringify(full));
      conversation.nextSeq++;
      conversation.updatedAt = full.at;
      return full;
    });
    this.#broker.publish({
      event: eventOfRole[entry.role],
      data: { conversation_id: conversationId, ...written },
      ...(entry.intent_id === undefined ? {} : { intentId: entry.intent_id }),
    });
    return written;
  }

  /** Entries after `after`, oldest first, at most `limit`. */
  async read(conversationId: string, options: { after?: number; limit: number }): Promise<TranscriptEntry[] | undefined> {
    const lines = await readJsonLines<Header | TranscriptEntry>(this.#path(conversationId));
    if (lines.length === 0) return undefined;
    return (lines.slice(1) as TranscriptEntry[]).filter((entry) => entry.seq > (options.after ?? 0)).slice(0, options.limit);
  }

  /** The last `turns` user and assistant turns, for the chat model. */
  async history(conversationId: string, turns: number, maxChars: number): Promise<{ role: 'user' | 'assistant'; text: string }[]> {
    const entries = ((await this.read(conversationId, { limit: Number.MAX_SAFE_INTEGER })) ?? []).filter(
      (entry): entry is TranscriptEntry & { role: 'user' | 'assistant' } => entry.role === 'user' || entry.role === 'assistant',
    );
    const picked: { role: 'user' | 'assistant'; text: string }[] = [];
    let budget = maxChars;
    for (const entry of entries.slice(-turns).reverse()) {
      if (budget <= 0) break;
      picked.unshift({ role: entry.role, text: entry.text.slice(-budget) });
      budget -= entry.text.length;
    }
    return picked;
  }

  /** Every conversation with its first-line header. */
  async list(): Promise<{ conversation_id: string; created_at: string }[]> {
    const names = (await readdir(this.#root)).filter((name) => name.endsWith('.jsonl'));
    const headers = await Promise.all(
      names.map(async (name) => {
        const first = (await readFile(join(this.#root, name), 'utf8')).split('\n', 1)[0] ?? '';
        try {
          return JSON.parse(first) as Header;
        } catch {
          return undefined;
        }
      }),
    );
    return headers.filter((header): header is Header => header !== undefined).sort((a, b) => b.created_at.localeCompare(a.created_at));
  }
}
