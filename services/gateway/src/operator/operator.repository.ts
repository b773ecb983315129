import type { Clock } from '@platform/kit/clock';
import { notify } from '@platform/kit/db/channels';
import { type Kysely, sql } from 'kysely';
import type { GatewaySchema } from '../db/schema.ts';
import type { LedgerEntry } from '../metering/budget.repository.ts';

/** NOTIFY channel of cap changes; the payload is the actor. */
export const capsChannel = 'gateway_caps';

export const rollupDimensions = ['intent', 'goal', 'kind_route', 'model', 'slot'] as const;
export type RollupDimension = (typeof rollupDimensions)[number];

// A closed map from the query's word to a column: the caller never chooses SQL text.
const rollupColumn = { intent: 'intent_id', goal: 'goal_id', kind_route: 'kind_route', model: 'model', slot: 'slot' } as const;

export interface SpendRow {
  actor: string;
  day: string;
  spentUnits: bigint;
  reservedUnits: bigint;
  limitUnits: bigint;
  calls: number;
}

export interface RollupRow {
  key: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUnits: bigint;
}

/** A ledger entry as stored: the booking plus its id and time. */
export interface LedgerRow extends LedgerEntry {
  id: string;
  createdAt: Date;
}

export interface DayRange {
  actor?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** The operator's reads and the per-actor caps. Sums come back as text: PostgreSQL's sum(int8) is numeric. */
export class OperatorRepository {
  readonly #db: Kysely<GatewaySchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<GatewaySchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async capOverride(actor: string): Promise<bigint | undefined> {
    const row = await this.#db.selectFrom('actor_caps').select('limit_units').where('actor', '=', actor).executeTakeFirst();
    return row?.limit_units;
  }

  async setCap(actor: string, limitUnits: bigint): Promise<void> {
    await this.#db
      .insertInto('actor_caps')
      .values({ actor, limit_units: limitUnits, updated_at: this.#clock.sqlNow() })
      .onConflict((conflict) => conflict.column('actor').doUpdateSet({ limit_units: limitUnits, updated_at: this.#clock.sqlNow() }))
      .execute();
    await this.#announceCap(actor);
  }

  async removeCap(actor: string): Promise<void> {
    await this.#db.deleteFrom('actor_caps').where('actor', '=', actor).execute();
    await this.#announceCap(actor);
  }

  /** Other instances give back their slices of the actor's budget and read the cap again on its next call. */
  async #announceCap(actor: string): Promise<void> {
    await sql`select ${notify(capsChannel, actor)}`.execute(this.#db);
  }

  /** Spend per actor and day, newest day first. */
  async spend(range: DayRange, defaultCapUnits: bigint, limit: number): Promise<SpendRow[]> {
    let query = this.#db
      .selectFrom('daily_spend as d')
      .leftJoin('actor_caps as c', 'c.actor', 'd.actor')
      .select(['d.actor', sql<string>`d.day::text`.as('day'), 'd.spent_units', 'd.reserved_units', 'd.calls', 'c.limit_units']);
    if (range.actor !== undefined) query = query.where('d.actor', '=', range.actor);
    if (range.from !== undefined) query = query.where('d.day', '>=', range.from);
    if (range.to !== undefined) query = query.where('d.day', '<=', range.to);
    const rows = await query.orderBy('d.day', 'desc').orderBy('d.actor').limit(limit).execute();
    return rows.map((row) => ({
      actor: row.actor,
      day: row.day,
      spentUnits: row.spent_units,
      reservedUnits: row.reserved_units,
      limitUnits: row.limit_units ?? defaultCapUnits,
      calls: row.calls,
    }));
  }

  /** Cost, calls and tokens grouped by one dimension, largest cost first; calls without that id are left out. */
  async rollup(by: RollupDimension, range: DayRange, limit: number): Promise<RollupRow[]> {
    const column = rollupColumn[by];
    let query = this.#db
      .selectFrom('ledger')
      .select([
        sql<string>`${sql.ref(column)}`.as('key'),
        sql<number>`count(*)::int`.as('calls'),
        sql<string>`sum(input_tokens)::text`.as('input_tokens'),
        sql<string>`sum(output_tokens)::text`.as('output_tokens'),
        sql<string>`sum(cost_units)::text`.as('cost_units'),
      ])
      .where(column, 'is not', null);
    if (range.actor !== undefined) query = query.where('actor', '=', range.actor);
    if (range.from !== undefined) query = query.where('day', '>=', range.from);
    if (range.to !== undefined) query = query.where('day', '<=', range.to);
    const rows = await query.groupBy(column).orderBy(sql`sum(cost_units)`, 'desc').orderBy(column).limit(limit).execute();
    return rows.map((row) => ({
      key: row.key,
      calls: row.calls,
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      costUnits: BigInt(row.cost_units),
    }));
  }

  /** Ledger rows newest first; `before` is the id of the last row of the previous page. */
  async ledger(range: DayRange, limit: number, before: string | undefined): Promise<LedgerRow[]> {
    let query = this.#db.selectFrom('ledger').selectAll().select(sql<string>`day::text`.as('day_text'));
    if (range.actor !== undefined) query = query.where('actor', '=', range.actor);
    if (range.from !== undefined) query = query.where('day', '>=', range.from);
    if (range.to !== undefined) query = query.where('day', '<=', range.to);
    if (before !== undefined) query = query.where('id', '<', before);
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      id: row.id,
      actor: row.actor,
      day: row.day_text,
      createdAt: row.created_at,
      slot: row.slot,
      model: row.model,
      kind: row.kind,
      streamed: row.streamed,
      rateTableVersion: row.rate_table_v,
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      costUnits: row.cost_units,
      basis: row.basis,
      intentId: row.intent_id,
      goalId: row.goal_id,
      kindRoute: row.kind_route,
    }));
  }
}
