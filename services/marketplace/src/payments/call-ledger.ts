import { prepared } from '@platform/kit/db/prepared-statements';
import { isDatabaseUnavailable } from '@platform/kit/db/unavailable';
import { CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Logger } from 'pino';
import type { InvocationTable, MarketplaceSchema } from '../db/schema.ts';
import type { MarketplaceMetrics } from '../metrics.ts';
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

/** What finishing an invocation adds to its listing's measured stats. */
export interface StatsDelta {
  success: boolean;
  /** Whether the provider is to blame for a failure (a caller's mistake does not count against it). */
  providerFailure: boolean;
  latencyMs: number;
}

/** How long a served call's outcome is written again while the database cannot take it. */
const outcomeRetryMs = 60_000;

type Write = { kind: 'claim'; row: InvocationTable } | { kind: 'finish'; row: InvocationTable; stats: StatsDelta } | { kind: 'tab'; entry: TabEntry };

interface Queued {
  write: Write;
  done: (claimed: boolean) => void;
  fail: (error: unknown) => void;
}

/**
 * Group commit for every write a paid call makes: a hold call's claim (the pending invocation that takes its
 * idempotency key) and its finish, and a voucher call's invocation with its tab's move. Writes queue while a
 * group is being written; the next group (every write queued meanwhile) is one statement of data-modifying CTEs:
 * one insert of the new invocations, one update of the finished ones, one of the tabs, one upsert of the
 * listings' stats, each fed by one `jsonb_to_recordset` parameter. Each caller waits for its group's commit, so
 * nothing answered is ever lost, and a thousand calls a second cost a few dozen statements, not thousands.
 * The stats of a listing every call touches are one upsert per group instead of a row lock per call.
 */
export class CallLedger {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #logger: Logger;
  #queue: Queued[] = [];
  #writing: Promise<void> | undefined;
  /** Outcomes of served calls being written again after the database could not take them (`#writeAgain`). */
  readonly #retrying = new Set<Promise<void>>();
  /**
   * The group statement's text for each shape (which of its four parts a group has): compiled once, then only its
   * parameters change. Compiling it through Kysely took 0.1 ms of the request thread per group.
   */
  readonly #texts = new Map<string, string>();

  readonly #metrics: MarketplaceMetrics;

  /** Each call's outcome is counted in `metrics` once its group committed it (`marketplace_invocations_total`). */
  constructor(db: Kysely<MarketplaceSchema>, logger: Logger, metrics: MarketplaceMetrics) {
    this.#db = db;
    this.#logger = logger;
    this.#metrics = metrics;
  }

  /**
   * Inserts a pending invocation unless its caller already used its idempotency key: of racing claims exactly
   * one is true (the unique index decides, on both engines, across instances).
   */
  claim(row: InvocationTable): Promise<boolean> {
    return this.#enqueue({ kind: 'claim', row });
  }

  /** Writes a call's outcome (every outcome column of `row`) and adds it to its listing's stats. */
  async finish(row: InvocationTable, stats: StatsDelta): Promise<void> {
    await this.#enqueue({ kind: 'finish', row, stats });
    this.#metrics.finished(row);
  }

  /** A voucher's move on its tab, with the invocation it paid. */
  async record(entry: TabEntry): Promise<void> {
    await this.#enqueue({ kind: 'tab', entry });
    if (entry.invocation) this.#metrics.finished(entry.invocation);
  }

  /** Resolves once everything queued so far is written (outcomes being written again included). */
  async flushed(): Promise<void> {
    while (this.#writing || this.#retrying.size > 0) {
      await this.#writing;
      await Promise.allSettled([...this.#retrying]);
    }
  }

  #enqueue(write: Write): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ write, done: resolve, fail: reject });
      this.#writing ??= this.#drain();
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const group = this.#queue;
        this.#queue = [];
        await this.#writeGroup(group);
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #writeGroup(group: Queued[]): Promise<void> {
    try {
      const claimed = await this.#write(group.map((item) => item.write));
      for (const item of group) item.done(item.write.kind === 'claim' && claimed.has(item.write.row.id));
    } catch (error) {
      // The statement was refused as a whole (nothing of it applied) because of what one write carries (a provider's
      // answer PostgreSQL will not store, say): each write alone again, so one call's data cannot fail its neighbours.
      if (group.length > 1 && refusedStatement(error)) {
        for (const item of group) await this.#writeGroup([item]);
        return;
      }
      this.#logger.error({ err: error, writes: group.length }, 'writing a group of calls failed');
      for (const item of group) {
        // A served call's outcome must land: the provider answered and the hold was settled. A claim or a tab's
        // move fails with the group (nothing was served on it yet; the caller is told 503 and may retry).
        if (item.write.kind === 'finish' && isDatabaseUnavailable(error)) this.#writeAgain(item, error);
        else item.fail(error);
      }
    }
  }

  /**
   * Writes a served call's outcome again, alone, until the database takes it or `outcomeRetryMs` have passed: the
   * caller waits for it as for its group. An outcome whose first commit landed unseen (the connection went with its
   * answer) sets the same columns again and counts once more in its listing's stats, the one thing not idempotent.
   */
  #writeAgain(item: Queued, firstError: unknown): void {
    const retry = (async () => {
      let error = firstError;
      const giveUpAt = Date.now() + outcomeRetryMs;
      // Wall time: how soon another process (PostgreSQL) is back is not business time.
      for (let pause = 100; Date.now() < giveUpAt; pause = Math.min(pause * 2, 2_000)) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        try {
          await this.#write([item.write]);
          item.done(false);
          return;
        } catch (next) {
          error = next;
          if (!isDatabaseUnavailable(next)) break;
        }
      }
      this.#logger.error({ err: error }, 'writing the outcome of a served call failed');
      item.fail(error);
    })();
    this.#retrying.add(retry);
    void retry.finally(() => this.#retrying.delete(retry));
  }

  /** One statement for the whole group; returns the ids of the invocations it inserted. */
  async #write(writes: Write[]): Promise<Set<string>> {
    const result = await this.#db.executeQuery(this.#statement(groupParts(groupRows(writes))));
    return new Set(result.rows.map((row) => row.id));
  }

  #statement(parts: GroupParts): CompiledQuery<{ id: string }> {
    const shape = partNames.map((name) => (parts[name] === undefined ? '-' : name[0])).join('');
    const values = partNames.flatMap((name) => parts[name] ?? []);
    const text = this.#texts.get(shape);
    if (text !== undefined) return CompiledQuery.raw(text, values);
    const compiled = groupStatement(parts).compile(this.#db);
    // The cached text takes the parts' JSON in this order: check it once per shape.
    if (compiled.parameters.length !== values.length || compiled.parameters.some((value, index) => value !== values[index]))
      throw new Error(`the group statement's parameters are not its parts in order (shape ${shape})`);
    this.#texts.set(shape, compiled.sql);
    return compiled;
  }
}

type StatsRow = { listing_id: string; calls: number; successes: number; failures: number; latency: number; at: Date };
type TabMove = { id: string; sequence: bigint; cumulative: bigint; cost: bigint; voucher: unknown };

/** A group's writes as the rows of each table: new invocations, finished ones, each tab's move, each listing's stats. */
interface GroupRows {
  inserts: InvocationRecord[];
  finishes: InvocationRecord[];
  tabs: Map<string, TabMove>;
  stats: Map<string, StatsRow>;
}

function groupRows(writes: readonly Write[]): GroupRows {
  const rows: GroupRows = { inserts: [], finishes: [], tabs: new Map(), stats: new Map() };
  for (const write of writes) {
    if (write.kind === 'claim') rows.inserts.push(invocationRecord(write.row));
    else if (write.kind === 'finish') {
      rows.finishes.push(invocationRecord(write.row));
      // A caller's mistake or an interruption on our side does not count against the listing.
      const { success, providerFailure, latencyMs } = write.stats;
      const counted = success || providerFailure ? 1 : 0;
      addStats(rows.stats, write.row.listing_id, write.row.finished_at ?? write.row.started_at, {
        calls: counted,
        successes: success ? 1 : 0,
        failures: counted - (success ? 1 : 0),
        latency: counted * latencyMs,
      });
    } else addTabEntry(rows, write.entry);
  }
  return rows;
}

function addTabEntry(rows: GroupRows, entry: TabEntry): void {
  const tab = rows.tabs.get(entry.tabId) ?? { id: entry.tabId, sequence: 0n, cumulative: 0n, cost: 0n, voucher: null };
  if (entry.sequence >= tab.sequence) {
    tab.sequence = entry.sequence;
    tab.voucher = entry.voucher;
  }
  if (entry.cumulative > tab.cumulative) tab.cumulative = entry.cumulative;
  tab.cost += entry.cost;
  rows.tabs.set(entry.tabId, tab);
  if (!entry.invocation) return;
  rows.inserts.push(invocationRecord(entry.invocation));
  if (entry.outcome) {
    const { success, latencyMs } = entry.outcome;
    const at = entry.invocation.finished_at ?? entry.invocation.started_at;
    addStats(rows.stats, entry.listingId, at, { calls: 1, successes: success ? 1 : 0, failures: success ? 0 : 1, latency: latencyMs });
  }
}

function addStats(stats: Map<string, StatsRow>, listingId: string, at: Date, delta: Omit<StatsRow, 'listing_id' | 'at'>): void {
  const listing = stats.get(listingId) ?? { listing_id: listingId, calls: 0, successes: 0, failures: 0, latency: 0, at };
  listing.calls += delta.calls;
  listing.successes += delta.successes;
  listing.failures += delta.failures;
  listing.latency += delta.latency;
  if (at > listing.at) listing.at = at;
  stats.set(listingId, listing);
}

/** The parts of a group's statement, in the statement's order, each the JSON of its rows (absent: no such rows). */
const partNames = ['inserts', 'finishes', 'tabs', 'stats'] as const;
type GroupParts = Partial<Record<(typeof partNames)[number], string>>;

function groupParts(rows: GroupRows): GroupParts {
  const parts: GroupParts = {};
  if (rows.inserts.length > 0) parts.inserts = recordsJson(rows.inserts);
  if (rows.finishes.length > 0) parts.finishes = recordsJson(rows.finishes);
  if (rows.tabs.size > 0)
    parts.tabs = recordsJson(
      [...rows.tabs.values()].map((tab) => ({ ...tab, sequence: `${tab.sequence}`, cumulative: `${tab.cumulative}`, cost: `${tab.cost}` })),
    );
  if (rows.stats.size > 0) parts.stats = recordsJson([...rows.stats.values()]);
  return parts;
}

/**
 * The group's one statement. PostgreSQL runs every data-modifying WITH part exactly once, on one snapshot: a row is
 * changed by one part at most (a call's claim and its finish are never in one group: the finish waits for the
 * claim's commit). Answers the ids the insert took. Its only parameters are the parts' JSON, in `partNames` order.
 */
function groupStatement(parts: GroupParts): RawBuilder<{ id: string }> {
  const statements: RawBuilder<unknown>[] = [];
  if (parts.inserts !== undefined)
    statements.push(sql`insert into invocations (${columnList(invocationColumns)})
      select ${columnList(invocationColumns)} from jsonb_to_recordset(${parts.inserts}::jsonb) as r(${recordType(invocationColumns)})
      on conflict (caller_did, idempotency_key) where idempotency_key <> '' do nothing
      returning id`);
  if (parts.finishes !== undefined)
    statements.push(sql`update invocations set ${sql.join(
      outcomeColumns.map((column) => sql`${sql.ref(column)} = f.${sql.ref(column)}`),
      sql`, `,
    )}
      from jsonb_to_recordset(${parts.finishes}::jsonb) as f(id uuid, ${recordType(outcomeColumns)})
      where invocations.id = f.id`);
  if (parts.tabs !== undefined)
    statements.push(sql`update tabs set
        sequence = greatest(tabs.sequence, v.sequence),
        authorized_micros = greatest(tabs.authorized_micros, v.cumulative),
        spent_micros = tabs.spent_micros + v.cost,
        last_voucher = case when tabs.sequence <= v.sequence then v.voucher else tabs.last_voucher end
      from jsonb_to_recordset(${parts.tabs}::jsonb) as v(id uuid, sequence bigint, cumulative bigint, cost bigint, voucher jsonb)
      where tabs.id = v.id`);
  if (parts.stats !== undefined)
    statements.push(sql`insert into listing_stats (listing_id, calls, successes, failures, latency_ms_total, last_call_at)
      select listing_id, calls, successes, failures, round(latency)::bigint, at
      from jsonb_to_recordset(${parts.stats}::jsonb)
        as s(listing_id uuid, calls bigint, successes bigint, failures bigint, latency float8, at timestamptz)
      ${addToListingStats}`);
  const named = statements.map((statement, index) => sql`${sql.raw(`part${index}`)} as (${statement})`);
  return prepared(sql<{ id: string }>`with ${sql.join(named, sql`, `)} ${parts.inserts !== undefined ? sql`select id from part0` : sql`select null as id`}`);
}

/** Every column of an invocation with its SQL type, in one order for the group's insert. */
const invocationColumnTypes = {
  id: 'uuid',
  listing_id: 'uuid',
  operation: 'text',
  caller_did: 'text',
  idempotency_key: 'text',
  request_hash: 'text',
  rail: 'text',
  quote_id: 'uuid',
  status: 'text',
  cap_micros: 'bigint',
  cost_micros: 'bigint',
  units: 'bigint',
  hold_id: 'uuid',
  channel_id: 'uuid',
  capture_seq: 'bigint',
  request_digest: 'text',
  response_digest: 'text',
  response: 'jsonb',
  error: 'jsonb',
  latency_ms: 'integer',
  started_at: 'timestamptz',
  finished_at: 'timestamptz',
  receipt: 'jsonb',
  tab_sequence: 'bigint',
} as const satisfies Record<keyof InvocationTable, string>;
type InvocationColumn = keyof typeof invocationColumnTypes;
const invocationColumns = Object.keys(invocationColumnTypes) as InvocationColumn[];

/** What a call's outcome sets on its pending row. */
const outcomeColumns = [
  'status',
  'cost_micros',
  'units',
  'hold_id',
  'capture_seq',
  'response_digest',
  'response',
  'error',
  'latency_ms',
  'finished_at',
] as const satisfies ReadonlyArray<InvocationColumn>;

const columnList = (columns: readonly InvocationColumn[]) => sql.join(columns.map((column) => sql.ref(column)));
const recordType = (columns: readonly InvocationColumn[]) => sql.raw(columns.map((column) => `${column} ${invocationColumnTypes[column]}`).join(', '));

/** An invocation as JSON takes it: its bigints as decimal strings (PostgreSQL reads them back exactly). */
type InvocationRecord = Omit<InvocationTable, 'cap_micros' | 'cost_micros' | 'units' | 'capture_seq' | 'tab_sequence'> & {
  cap_micros: string;
  cost_micros: string;
  units: string;
  capture_seq: string | null;
  tab_sequence: string | null;
};

function invocationRecord(row: InvocationTable): InvocationRecord {
  return {
    ...row,
    cap_micros: `${row.cap_micros}`,
    cost_micros: `${row.cost_micros}`,
    units: `${row.units}`,
    capture_seq: row.capture_seq === null ? null : `${row.capture_seq}`,
    tab_sequence: row.tab_sequence === null ? null : `${row.tab_sequence}`,
  };
}

/** Rows as one JSON array (dates become ISO text); without a replacer, which cost more than the rest of the encoding. */
function recordsJson(rows: readonly object[]): string {
  return JSON.stringify(rows);
}

/**
 * Whether PostgreSQL refused the statement for what it carries (SQLSTATE class 22, data exception, or 23,
 * integrity): nothing of it applied, so its writes can be tried one by one. A lost connection is not that: the
 * group may have committed, and a tab's spent amount must not be added twice.
 */
function refusedStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}
