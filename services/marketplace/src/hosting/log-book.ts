import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { HostedLogTable, MarketplaceSchema } from '../db/schema.ts';
import { hostedLimits } from './hosted-limits.ts';
import { insertLogLines, type LogLine, trimLogLines } from './hosting.repository.ts';

type Listener = (line: LogLine) => void;

/** Lines written for a listing between two trims: trimming after every write would double what logging costs. */
const trimEvery = 200;

/**
 * The workers' log lines: kept in the database (the newest 10,000 per listing, so they outlive a restart), written
 * off the call's path in one insert per event-loop turn, and handed to followers (`GET /logs?follow=true`) of this
 * instance as they are written.
 */
export class LogBook {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #logger: Logger;
  #queue: Array<Omit<HostedLogTable, 'id'>> = [];
  #flushing: Promise<void> = Promise.resolve();
  #scheduled = false;
  readonly #sinceTrim = new Map<string, number>();
  readonly #listeners = new Map<string, Set<Listener>>();

  constructor(db: Kysely<MarketplaceSchema>, logger: Logger) {
    this.#db = db;
    this.#logger = logger;
  }

  add(lines: Array<Omit<HostedLogTable, 'id'>>): void {
    if (lines.length === 0) return;
    this.#queue.push(...lines);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flushing = this.#flushing.then(() => this.#flush());
    });
  }

  /** Until the lines added so far are written. */
  async flushed(): Promise<void> {
    while (this.#scheduled || this.#queue.length > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      await this.#flushing;
    }
    await this.#flushing;
  }

  follow(listingId: string, listener: Listener): () => void {
    const set = this.#listeners.get(listingId) ?? new Set<Listener>();
    this.#listeners.set(listingId, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(listingId);
    };
  }

  async #flush(): Promise<void> {
    const rows = this.#queue;
    this.#queue = [];
    if (rows.length === 0) return;
    try {
      const ids = await insertLogLines(this.#db, rows);
      rows.forEach((row, index) => {
        const line = { ...row, id: ids[index]?.id as bigint };
        for (const listener of this.#listeners.get(row.listing_id) ?? []) listener(line);
      });
      const written = new Map<string, number>();
      for (const row of rows) written.set(row.listing_id, (written.get(row.listing_id) ?? 0) + 1);
      for (const [listing, count] of written) {
        const total = (this.#sinceTrim.get(listing) ?? trimEvery) + count;
        if (total < trimEvery) {
          this.#sinceTrim.set(listing, total);
          continue;
        }
        this.#sinceTrim.set(listing, 0);
        await trimLogLines(this.#db, listing, hostedLimits.logLinesPerListing);
      }
    } catch (error) {
      this.#logger.warn({ err: error, lines: rows.length }, 'hosted workers’ log lines could not be written');
    }
  }
}
