import { createHash } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { ChatService } from '../chat/chat-service.ts';
import { ensureDirectory, readJsonFile, writeFileDurably } from '../files/durable-files.ts';

/** What the scheduler sends (through the router): the alarm's message, its conversation and payload. */
export interface WakeBody {
  wake_message: string;
  conversation_id?: string;
  payload?: Record<string, unknown>;
  user_id?: string;
  alarm_id?: string;
  label?: string;
  scheduled_for?: string;
  fired_at?: string;
  attempt?: number;
}

interface WakeRecord {
  key: string;
  received_at: string;
  body: WakeBody;
  status: 'received' | 'done' | 'failed';
  intent_id?: string | null;
  error?: string;
}

/** Done wakes are kept this long to recognise repeats (the scheduler retries one occurrence for at most ~2 h). */
export const wakeRetentionMs = 7 * 24 * 3600 * 1000;

/**
 * Turns scheduler wakes into chat turns, each at most once per Idempotency-Key: the wake is written durably to
 * `wakes/<sha256(key)>.json` (exclusively, so a concurrent repeat loses the race) before it is acknowledged, then
 * handled in the background. Wakes received but not handled when the process stopped are handled at the next start.
 */
export class WakeInbox {
  readonly #root: string;
  readonly #chat: ChatService;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #handling = new Set<Promise<void>>();

  constructor(root: string, chat: ChatService, clock: Clock, logger: Logger) {
    this.#root = root;
    this.#chat = chat;
    this.#clock = clock;
    this.#logger = logger;
  }

  #path(key: string): string {
    return join(this.#root, `${createHash('sha256').update(key, 'utf8').digest('hex')}.json`);
  }

  async init(): Promise<void> {
    await ensureDirectory(this.#root);
  }

  /** Records a wake; `duplicate` when this key was seen before (nothing more happens). */
  async accept(key: string, body: WakeBody): Promise<{ duplicate: boolean; conversation_id: string }> {
    const record: WakeRecord = { key, received_at: this.#clock.now().toISOString(), body, status: 'received' };
    const conversationId = body.conversation_id || 'default';
    const fresh = await writeFileDurably(this.#path(key), JSON.stringify(record), { exclusive: true });
    if (!fresh) return { duplicate: true, conversation_id: conversationId };
    this.#handle(record);
    return { duplicate: false, conversation_id: conversationId };
  }

  /** Handles the wakes a previous process accepted but did not finish. */
  async resumePending(): Promise<number> {
    let count = 0;
    for (const name of await readdir(this.#root)) {
      if (!name.endsWith('.json')) continue;
      const record = await readJsonFile<WakeRecord>(join(this.#root, name));
      if (record?.status !== 'received') continue;
      this.#handle(record);
      count++;
    }
    return count;
  }

  /** Forgets wakes handled longer ago than the retention. */
  async purge(): Promise<number> {
    let removed = 0;
    const cutoff = this.#clock.now().getTime() - wakeRetentionMs;
    for (const name of await readdir(this.#root)) {
      if (!name.endsWith('.json')) continue;
      const path = join(this.#root, name);
      const record = await readJsonFile<WakeRecord>(path);
      if (record === undefined || record.status === 'received' || Date.parse(record.received_at) > cutoff) continue;
      if ((await stat(path)).isFile()) await rm(path, { force: true });
      removed++;
    }
    return removed;
  }

  /** Wakes whose turn is running now (the router asks, through /healthz, before it stops an idle daemon). */
  get inProgress(): number {
    return this.#handling.size;
  }

  /** Waits for wakes being handled (shutdown, tests). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#handling]);
  }

  #handle(record: WakeRecord): void {
    const work = (async () => {
      let done: WakeRecord;
      try {
        const reply = await this.#chat.turn({ message: record.body.wake_message, conversationId: record.body.conversation_id || 'default', wake: true });
        done = { ...record, status: 'done', intent_id: reply.intent_id };
      } catch (error) {
        this.#logger.warn({ err: error, alarm: record.body.alarm_id }, 'wake turn failed');
        done = { ...record, status: 'failed', error: error instanceof Error ? error.message : String(error) };
      }
      await writeFileDurably(this.#path(record.key), JSON.stringify(done));
    })().catch((error) => this.#logger.error({ err: error }, 'could not record a wake outcome'));
    this.#handling.add(work);
    const forget = () => this.#handling.delete(work);
    work.then(forget, forget);
  }
}
