import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Logger } from 'pino';
import type { InvocationTable, MarketplaceSchema } from '../db/schema.ts';
import { addToListingStats } from './listing-stats.ts';

/** One accepted voucher: what it moves on its tab, and the invocation it paid (none for a bare co-sign). */
export interface TabEntry {
  tabId: string;
  listingId: string;
  sequence: bigint;
  cumulative: bigint;
  voucher: unknown;
  cost: bigint;
  invocation?: InvocationTable;
  /** For the listing's measured stats. */
  outcome?: { success: boolean; latencyMs: number };
}

/**
 * Group commit for the voucher rail: entries queue while a group is being written; the next group (every entry
 * queued meanwhile) is written in one transaction: one multi-row insert of its invocations, one update per tab
 * and one upsert per listing's stats. Each caller's answer waits for its group's commit, so nothing answered is
 * ever lost, and a thousand calls a second cost a few dozen transactions, not thousands.
 */
export class TabLedger {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #logger: Logger;
  #queue: Array<{ entry: TabEntry; done: (error?: unknown) => void }> = [];
  #writing: Promise<void> | undefined;

  constructor(db: Kysely<MarketplaceSchema>, logger: Logger) {
    this.#db = db;
    this.#logger = logger;
  }

  record(entry: TabEntry): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ entry, done: (error) => (error === undefined ? resolve() : reject(error)) });
      this.#writing ??= this.#drain();
    });
  }

  /** Resolves once everything queued so far is written. */
  async flushed(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const group = this.#queue;
        this.#queue = [];
        try {
          await this.#write(group.map((item) => item.entry));
          for (const item of group) item.done();
        } catch (error) {
          this.#logger.error({ err: error, entries: group.length }, 'writing a group of vouchers failed');
          for (const item of group) item.done(error);
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #write(entries: TabEntry[]): Promise<void> {
    const tabs = new Map<string, { sequence: bigint; cumulative: bigint; voucher: unknown; cost: bigint }>();
    const stats = new Map<string, { calls: number; successes: number; failures: number; latency: number; at: Date }>();
    const invocations: Array<Record<string, unknown>> = [];
    for (const entry of entries) {
      const tab = tabs.get(entry.tabId) ?? { sequence: 0n, cumulative: 0n, voucher: null, cost: 0n };
      if (entry.sequence >= tab.sequence) {
        tab.sequence = entry.sequence;
        tab.voucher = entry.voucher;
      }
      if (entry.cumulative > tab.cumulative) tab.cumulative = entry.cumulative;
      tab.cost += entry.cost;
      tabs.set(entry.tabId, tab);
      if (entry.invocation) invocations.push(asRow(entry.invocation));
      if (entry.outcome && entry.invocation) {
        const listing = stats.get(entry.listingId) ?? { calls: 0, successes: 0, failures: 0, latency: 0, at: entry.invocation.started_at };
        listing.calls += 1;
        listing.successes += entry.outcome.success ? 1 : 0;
        listing.failures += entry.outcome.success ? 0 : 1;
        listing.latency += entry.outcome.latencyMs;
        listing.at = entry.invocation.finished_at ?? listing.at;
        stats.set(entry.listingId, listing);
      }
    }
    // One statement for the whole group (PostgreSQL runs every data-modifying WITH part exactly once): the
    // invocations, every tab the group touched and every listing's stats, in one round trip and one commit.
    const parts: RawBuilder<unknown>[] = [];
    if (invocations.length > 0)
      parts.push(sql`insert into invocations (${sql.join(invocationColumns.map((column) => sql.ref(column)))})
        values ${sql.join(invocations.map((row) => sql`(${sql.join(invocationColumns.map((column) => row[column]))})`))}
        on conflict (caller_did, idempotency_key) where idempotency_key <> '' do nothing`);
    if (tabs.size > 0)
      parts.push(sql`update tabs set
          sequence = greatest(tabs.sequence, v.sequence),
          authorized_micros = greatest(tabs.authorized_micros, v.cumulative),
          spent_micros = tabs.spent_micros + v.cost,
          last_voucher = case when tabs.sequence <= v.sequence then v.voucher else tabs.last_voucher end
        from (values ${sql.join(
          [...tabs].map(
            ([id, tab]) => sql`(${id}::uuid, ${tab.sequence}::bigint, ${tab.cumulative}::bigint, ${tab.cost}::bigint, ${JSON.stringify(tab.voucher)}::jsonb)`,
          ),
        )}) as v(id, sequence, cumulative, cost, voucher)
        where tabs.id = v.id`);
    if (stats.size > 0)
      parts.push(sql`insert into listing_stats (listing_id, calls, successes, failures, latency_ms_total, last_call_at)
        values ${sql.join(
          [...stats].map(
            ([listingId, delta]) =>
              sql`(${listingId}::uuid, ${delta.calls}::bigint, ${delta.successes}::bigint, ${delta.failures}::bigint, ${Math.round(delta.latency)}::bigint, ${delta.at}::timestamptz)`,
          ),
        )}
        ${addToListingStats}`);
    await sql`with ${sql.join(
      parts.map((part, index) => sql`${sql.raw(`part${index}`)} as (${part})`),
      sql`, `,
    )} select 1`.execute(this.#db);
  }
}

/** Every column of an invocation, in one order for the group's multi-row insert. */
const invocationColumns = [
  'id',
  'listing_id',
  'operation',
  'caller_did',
  'idempotency_key',
  'request_hash',
  'rail',
  'quote_id',
  'status',
  'cap_micros',
  'cost_micros',
  'units',
  'hold_id',
  'channel_id',
  'capture_seq',
  'request_digest',
  'response_digest',
  'response',
  'error',
  'latency_ms',
  'started_at',
  'finished_at',
  'receipt',
  'tab_sequence',
] as const satisfies ReadonlyArray<keyof InvocationTable>;
// A column added to the table and not to the list fails to compile here.
const everyColumn: Exclude<keyof InvocationTable, (typeof invocationColumns)[number]> extends never ? true : never = true;
void everyColumn;

function asRow(invocation: InvocationTable): Record<string, unknown> {
  return {
    ...invocation,
    response: invocation.response === null ? null : JSON.stringify(invocation.response),
    error: invocation.error === null ? null : JSON.stringify(invocation.error),
    receipt: null,
  };
}
