import type { Clock } from '@platform/kit/clock';
import { notify } from '@platform/kit/db/channels';
import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import type { AlarmRow, AlarmTable, SchedulerSchema } from '../db/schema.ts';
import type { FireOutcome } from './fire-outcome.ts';

export const alarmsChannel = 'scheduler_alarms';

export type NewAlarm = Omit<Insertable<AlarmTable>, 'created_at' | 'next_fire_at' | 'occurrence_at'> & {
  /** Absolute time, or seconds after the database clock's now. */
  fireAt: Date | { delaySeconds: number };
};

/** The columns a fire needs: the wake body and the inputs of its outcome (fewer columns, less to parse per wake). */
export const claimedColumns = [
  'id',
  'owner_did',
  'owner_user_id',
  'label',
  'wake_message',
  'conversation_id',
  'payload',
  'kind',
  'cron_expr',
  'timezone',
  'next_fire_at',
  'occurrence_at',
  'attempt',
  'failure_count',
  'max_failures',
  'last_fired_at',
] as const satisfies readonly (keyof AlarmRow)[];

/** When the dispatcher should look again (null: nothing pending), with the database's now. */
export interface NextWake {
  nextAt: Date | null;
  now: Date;
}

export type ClaimedAlarm = Pick<AlarmRow, (typeof claimedColumns)[number]> & { claimed_at: Date };

/** All SQL about alarms. Times that instances must agree on come from `clock.sqlNow()`. */
export class AlarmsRepository {
  readonly #db: Kysely<SchedulerSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<SchedulerSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Inserts unless the owner already has the idempotency key; returns the stored row either way and whether it is new. */
  async insertOrGetExisting(alarm: NewAlarm): Promise<{ row: AlarmRow; created: boolean }> {
    const now = this.#clock.sqlNow();
    const fireAt =
      alarm.fireAt instanceof Date
        ? sql<Date>`${alarm.fireAt.toISOString()}::timestamptz`
        : sql<Date>`${now} + make_interval(secs => ${alarm.fireAt.delaySeconds})`;
    const { fireAt: _fireAt, ...columns } = alarm;
    const inserted = await this.#db
      .insertInto('alarms')
      .values({ ...columns, created_at: now, next_fire_at: fireAt, occurrence_at: fireAt })
      .onConflict((conflict) => conflict.columns(['owner_did', 'idempotency_key']).where('idempotency_key', '<>', '').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) {
      await sql`select ${notify(alarmsChannel, inserted.next_fire_at.toISOString())}`.execute(this.#db);
      return { row: inserted, created: true };
    }
    const existing = await this.#db
      .selectFrom('alarms')
      .selectAll()
      .where('owner_did', '=', alarm.owner_did)
      .where('idempotency_key', '=', alarm.idempotency_key ?? '')
      .executeTakeFirstOrThrow();
    return { row: existing, created: false };
  }

  /** The clock all instances agree on (the database's now in production). */
  async databaseNow(): Promise<Date> {
    const result = await sql<{ now: Date }>`select ${this.#clock.sqlNow()} as now`.execute(this.#db);
    return new Date((result.rows[0] as { now: Date }).now);
  }

  async findOwned(ownerDid: string, id: string): Promise<AlarmRow | undefined> {
    return this.#db.selectFrom('alarms').selectAll().where('id', '=', id).where('owner_did', '=', ownerDid).executeTakeFirst();
  }

  /** The owner's alarms, most recent first (UUIDv7 ids break ties in creation order). */
  async listOwned(ownerDid: string, limit: number): Promise<AlarmRow[]> {
    return this.#db
      .selectFrom('alarms')
      .selectAll()
      .where('owner_did', '=', ownerDid)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** Cancels an active alarm; any other state is returned unchanged. Undefined when not the owner's. */
  async cancelOwned(ownerDid: string, id: string): Promise<AlarmRow | undefined> {
    const cancelled = await this.#db
      .updateTable('alarms')
      .set({ status: 'cancelled', claim_token: null, claimed_until: null })
      .where('id', '=', id)
      .where('owner_did', '=', ownerDid)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst();
    return cancelled ?? this.findOwned(ownerDid, id);
  }

  /**
   * Claims up to `limit` due alarms for one dispatcher instance with a lease. SKIP LOCKED lets many
   * instances claim side by side without waiting on or double-claiming each other's rows; an expired
   * lease (a crashed instance) makes an alarm claimable again. The rows are looked up by primary key
   * (`= any(array(...))`): a join with the CTE lets the planner pick a sequential scan of the whole table.
   *
   * The plan is pinned to the due index (see `#inDueOrder`). A claim that comes back short took everything due, so
   * the same transaction also answers when to look again (`next`), saving the dispatcher another round of
   * statements per alarm when alarms fall due one by one.
   */
  async claimDue(claimToken: string, limit: number, leaseMs: number): Promise<{ alarms: ClaimedAlarm[]; next?: NextWake }> {
    const now = this.#clock.sqlNow();
    const { rows, next } = await this.#inDueOrder(async (trx) => {
      const result = await sql<ClaimedAlarm>`
        with due as (
          select id from alarms
          where status = 'active' and next_fire_at <= ${now} and (claim_token is null or claimed_until <= ${now})
          order by next_fire_at
          limit ${limit}
          for update skip locked
        )
        update alarms set claim_token = ${claimToken}, claimed_until = ${now} + make_interval(secs => ${leaseMs / 1000})
        where alarms.id = any(array(select id from due))
        returning ${sql.join(claimedColumns.map((column) => sql.ref(`alarms.${column}`)))}, ${now} as claimed_at`.execute(trx);
      return { rows: result.rows, next: result.rows.length < limit ? await this.#nextWake(trx) : undefined };
    });
    // One claim time for the batch (the statement's now): parsed once, shared by every row.
    const claimedAt = rows.length === 0 ? undefined : new Date((rows[0] as ClaimedAlarm).claimed_at);
    for (const row of rows) row.claimed_at = claimedAt as Date;
    return next ? { alarms: rows, next } : { alarms: rows };
  }

  /**
   * How many alarms are due and not held by a live claim: what the dispatchers have yet to take (the metrics' gauge,
   * read at scrape time). Walks the due index over the due rows only, so it costs what the backlog is.
   */
  async countDue(): Promise<number> {
    const now = this.#clock.sqlNow();
    const result = await sql<{ due: number }>`
      select count(*)::int as due from alarms
      where status = 'active' and next_fire_at <= ${now} and (claim_token is null or claimed_until <= ${now})`.execute(this.#db);
    return (result.rows[0] as { due: number }).due;
  }

  /** When the dispatcher should look again: the earliest unclaimed due time or lease expiry, with the database's now. */
  async #nextWake(trx: Transaction<SchedulerSchema>): Promise<NextWake> {
    const now = this.#clock.sqlNow();
    const result = await sql<{ next_due: Date | null; next_lease: Date | null; now: Date }>`
      select
        (select next_fire_at from alarms where status = 'active' and claim_token is null order by next_fire_at limit 1) as next_due,
        (select min(claimed_until) from alarms where status = 'active' and claim_token is not null and next_fire_at <= ${now}) as next_lease,
        ${now} as now`.execute(trx);
    const row = result.rows[0] as { next_due: Date | null; next_lease: Date | null; now: Date };
    const candidates = [row.next_due, row.next_lease].filter((value): value is Date => value !== null).map((value) => new Date(value));
    const nextAt = candidates.length === 0 ? null : new Date(Math.min(...candidates.map((date) => date.getTime())));
    return { nextAt, now: new Date(row.now) };
  }

  /**
   * Writes the outcomes of a batch of deliveries. Only rows still claimed by this instance are written: an
   * instance whose lease ran out cannot overwrite the instance that took over, and a cancelled alarm stays
   * cancelled, because cancelling clears the claim. That fence also stands for `status = 'active'` (only active
   * rows are claimed, and every change of status clears the claim), which is left out of the condition on
   * purpose: it matches the due index's predicate, and without statistics the planner then scanned every active
   * alarm through that index instead of looking the batch up by primary key.
   *
   * `fired` are the `once` alarms delivered on their first try or a retry: their new state is the same for every
   * one of them but the fire time, which is their claim time (the lease's end less the lease), so they are written
   * by id alone, with nothing to build per alarm and no join. `outcomes` are the rest (cron, failures), each with
   * its own state, written in one `UPDATE … FROM unnest(…)`.
   */
  async completeFires(claimToken: string, completed: { fired: readonly string[]; outcomes: readonly FireOutcome[] }, leaseMs: number): Promise<number> {
    let written = 0;
    const { fired, outcomes } = completed;
    if (fired.length > 0) {
      const result = await sql`
        update alarms set
          status = 'fired', attempt = 1, failure_count = 0, last_error = '',
          last_fired_at = claimed_until - make_interval(secs => ${leaseMs / 1000}),
          fire_count = fire_count + 1, claim_token = null, claimed_until = null
        where id = any(${fired}::uuid[]) and claim_token = ${claimToken}`.execute(this.#db);
      written += Number(result.numAffectedRows ?? 0n);
    }
    if (outcomes.length === 0) return written;
    const column = <K extends keyof FireOutcome>(key: K) => outcomes.map((outcome) => outcome[key]);
    const iso = (dates: (Date | null)[]) => dates.map((date) => date?.toISOString() ?? null);
    const result = await sql`
      update alarms set
        status = v.status, next_fire_at = v.next_fire_at, occurrence_at = v.occurrence_at, attempt = v.attempt,
        failure_count = v.failure_count, last_error = v.last_error, last_fired_at = v.last_fired_at,
        fire_count = alarms.fire_count + v.fired, claim_token = null, claimed_until = null
      from unnest(${column('id')}::uuid[], ${column('status')}::text[], ${iso(column('next_fire_at'))}::timestamptz[],
                  ${iso(column('occurrence_at'))}::timestamptz[], ${column('attempt')}::int[], ${column('failure_count')}::int[],
                  ${column('last_error')}::text[], ${iso(column('last_fired_at'))}::timestamptz[], ${column('fired')}::int[])
        as v(id, status, next_fire_at, occurrence_at, attempt, failure_count, last_error, last_fired_at, fired)
      where alarms.id = any(${column('id')}::uuid[]) and alarms.id = v.id and alarms.claim_token = ${claimToken}`.execute(this.#db);
    return written + Number(result.numAffectedRows ?? 0n);
  }

  /**
   * Runs the dispatcher's reads of the due index with bitmap and sequential scans turned off for one short
   * transaction (`set_config(…, true)` lasts until it ends), so they walk the index in `next_fire_at` order and stop
   * as soon as they have what they need. On a table filled faster than autovacuum analyses it (a burst of new
   * alarms), the planner guessed a few dozen active alarms and read every due (for the next wake: every active)
   * alarm through a bitmap scan, then sorted them: about 10 ms a claim at 10,000 due, growing with the table. A
   * bitmap scan also never marks the index entries of fired alarms dead, so each later claim read them all again.
   */
  #inDueOrder<T>(run: (trx: Transaction<SchedulerSchema>) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute(async (trx) => {
      await sql`select set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`.execute(trx);
      return run(trx);
    });
  }

  /** Gives back every claim an instance still holds (graceful shutdown). */
  async releaseClaims(claimToken: string): Promise<number> {
    const result = await this.#db
      .updateTable('alarms')
      .set({ claim_token: null, claimed_until: null })
      .where('claim_token', '=', claimToken)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
