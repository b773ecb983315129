import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { bookingsByKey, budgetLeases, idempotentBookings, scopedChannels } from './budget-lease-migration.ts';

const rateCards: Migration = {
  async up(db) {
    await db.schema
      .createTable('rate_cards')
      .addColumn('version', 'integer', (c) => c.primaryKey().check(sql`version > 0`))
      .addColumn('usd_per_credit_pico', 'bigint', (c) => c.notNull().check(sql`usd_per_credit_pico > 0`))
      .addColumn('content_sha256', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('published_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('rate_card_prices')
      .addColumn('version', 'integer', (c) => c.notNull().references('rate_cards.version'))
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('input_pico_usd_per_mtok', 'bigint', (c) => c.notNull().check(sql`input_pico_usd_per_mtok >= 0`))
      .addColumn('output_pico_usd_per_mtok', 'bigint', (c) => c.notNull().check(sql`output_pico_usd_per_mtok >= 0`))
      .addPrimaryKeyConstraint('rate_card_prices_pkey', ['version', 'model'])
      .execute();
  },
};

const ledger: Migration = {
  async up(db) {
    await db.schema
      .createTable('actor_caps')
      .addColumn('actor', 'text', (c) => c.primaryKey())
      .addColumn('limit_units', 'bigint', (c) => c.notNull().check(sql`limit_units >= 0`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('daily_spend')
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('day', 'date', (c) => c.notNull())
      .addColumn('spent_units', 'bigint', (c) => c.notNull().check(sql`spent_units >= 0`))
      .addColumn('reserved_units', 'bigint', (c) => c.notNull().check(sql`reserved_units >= 0`))
      .addColumn('calls', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('daily_spend_pkey', ['actor', 'day'])
      .execute();
    // Every call updates its actor's row twice (reserve, settle): room on the page keeps those heap-only (HOT).
    await sql`alter table daily_spend set (fillfactor = 70)`.execute(db);
    // No foreign key to rate_cards: thousands of concurrent inserts would all share-lock the one card row.
    await db.schema
      .createTable('ledger')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('day', 'date', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('slot', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('chat', 'embedding')`))
      .addColumn('streamed', 'boolean', (c) => c.notNull())
      .addColumn('rate_table_v', 'integer', (c) => c.notNull())
      .addColumn('input_tokens', 'integer', (c) => c.notNull().check(sql`input_tokens >= 0`))
      .addColumn('output_tokens', 'integer', (c) => c.notNull().check(sql`output_tokens >= 0`))
      .addColumn('cost_units', 'bigint', (c) => c.notNull().check(sql`cost_units >= 0`))
      .addColumn('basis', 'text', (c) => c.notNull().check(sql`basis in ('usage', 'reservation')`))
      .addColumn('intent_id', 'text')
      .addColumn('goal_id', 'text')
      .addColumn('kind_route', 'text')
      .execute();
    // The operator reads: an actor's rows by day, and the rollups by intent and by goal.
    await sql`create index ledger_actor_day on ledger (actor, day)`.execute(db);
    await sql`create index ledger_intent on ledger (intent_id) where intent_id is not null`.execute(db);
    await sql`create index ledger_goal on ledger (goal_id) where goal_id is not null`.execute(db);
  },
};

/**
 * The hot path's writes as one function taking a whole batch (group commit): one statement, one commit and cached
 * plans for many calls. An op is a reservation or a booking (a settlement, with its ledger row, or a release). Ops
 * run in (actor, day, submission) order: concurrent batches, from this instance or another, lock the day rows in
 * the same order and cannot deadlock, and an actor's booking submitted before its next reservation is applied first.
 * `async_commit` lets the commit return before its WAL reaches disk (see the README).
 */
const applyFunction: Migration = {
  async up(db) {
    await sql`
      create function gateway_apply(ops jsonb, default_cap int8, async_commit boolean)
      returns table (op_index int, spent int8, cap int8, accepted boolean)
      language plpgsql as $$
      declare
        o record;
        actor_cap int8;
        after_spent int8;
      begin
        if async_commit then perform set_config('synchronous_commit', 'off', true); end if;
        for o in select * from jsonb_to_recordset(ops) as t(i int, op text, actor text, day date, units int8, cost int8, debit boolean)
                 order by t.actor, t.day, t.i loop
          after_spent := null;
          if o.op = 'reserve' then
            actor_cap := coalesce((select a.limit_units from actor_caps a where a.actor = o.actor), default_cap);
            insert into daily_spend as d (actor, day, spent_units, reserved_units, calls)
              select o.actor, o.day, 0, o.units, 0 where actor_cap > 0 and o.units <= actor_cap
            on conflict (actor, day) do update set reserved_units = d.reserved_units + excluded.reserved_units
              where d.spent_units + d.reserved_units + excluded.reserved_units <= actor_cap
            returning d.spent_units into after_spent;
            if after_spent is not null then
              return query select o.i, after_spent, actor_cap, true;
            else
              return query select o.i, coalesce((select s.spent_units from daily_spend s where s.actor = o.actor and s.day = o.day), 0::int8), actor_cap, false;
            end if;
          else
            update daily_spend d
              set reserved_units = d.reserved_units - o.units, spent_units = d.spent_units + o.cost, calls = d.calls + (case when o.debit then 1 else 0 end)
              where d.actor = o.actor and d.day = o.day
              returning d.spent_units into after_spent;
            return query select o.i, after_spent, null::int8, true;
          end if;
        end loop;
        insert into ledger (id, actor, day, created_at, slot, model, kind, streamed, rate_table_v, input_tokens, output_tokens, cost_units, basis, intent_id, goal_id, kind_route)
          select t.id, t.actor, t.day, t.created_at, t.slot, t.model, t.kind, t.streamed, t.rate_table_v, t.input_tokens, t.output_tokens, t.cost, t.basis, t.intent_id, t.goal_id, t.kind_route
          from jsonb_to_recordset(ops) as t(op text, id uuid, actor text, day date, created_at timestamptz, slot text, model text, kind text, streamed boolean, rate_table_v int,
                                             input_tokens int, output_tokens int, cost int8, basis text, intent_id text, goal_id text, kind_route text, debit boolean)
          where t.op = 'book' and t.debit;
      end $$`.execute(db);
  },
};

export const migrations: Record<string, Migration> = {
  '0001_rate_cards': rateCards,
  '0002_ledger': ledger,
  '0003_apply_function': applyFunction,
  '0004_budget_leases': budgetLeases,
  '0005_scoped_channels': scopedChannels,
  '0006_idempotent_bookings': idempotentBookings,
  '0007_bookings_by_key': bookingsByKey,
};
