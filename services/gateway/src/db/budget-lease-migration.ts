import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Budget leases (see the README, "Leases"): each gateway instance is a holder that keeps itself alive with a
 * heartbeat and holds, per actor and day, a slice of the day's budget (`budget_leases.units`, counted in
 * `daily_spend.reserved_units`). Calls reserve from the slice in memory; the database sees one grant per slice,
 * one booking per call and the slice's return.
 *
 * `gateway_apply` now takes a batch of grants, bookings and returns. Bookings and returns are set-based (they only
 * move amounts the holder already holds, so their order inside a batch does not matter); grants are decided one
 * by one under the day row's lock, after them, and only a live holder can be granted anything.
 */
export const budgetLeases: Migration = {
  async up(db) {
    await sql`create table lease_holders (holder uuid primary key, expires_at timestamptz not null)`.execute(db);
    await sql`create index lease_holders_expires_at on lease_holders (expires_at)`.execute(db);
    await sql`
      create table budget_leases (
        holder uuid not null, actor text not null, day date not null, units int8 not null check (units >= 0),
        primary key (holder, actor, day))`.execute(db);
    await sql`create index budget_leases_actor_day on budget_leases (actor, day)`.execute(db);
    await sql`drop function gateway_apply(jsonb, int8, boolean)`.execute(db);
    await sql`${sql.raw(applyFunction)}`.execute(db);
    await sql`${sql.raw(heartbeatFunction)}`.execute(db);
    await sql`${sql.raw(reclaimFunction)}`.execute(db);
  },
};

/**
 * NOTIFY channels are named per schema (kit `scopedChannel`), so that gateways in other schemas of the same
 * database are not asked to return slices they do not hold: `gateway_apply` again, notifying on
 * `<current_schema()>.<channel>`. The function's text is the one above (it was written with bare channel names).
 */
export const scopedChannels: Migration = {
  async up(db) {
    await sql`${sql.raw(applyFunction)}`.execute(db);
  },
};

/**
 * A booking the database could not take (its connection went) is written again once it can (`BudgetRepository.book`),
 * under the id it was first sent with; one whose first commit landed, its answer lost with the connection, is
 * already in the ledger and is skipped whole (no second debit): `gateway_apply` again, with that check.
 */
export const idempotentBookings: Migration = {
  async up(db) {
    await sql`${sql.raw(applyFunction)}`.execute(db);
  },
};

/**
 * Every row a batch touches found by its key: `gateway_apply` again. A retried booking is found in the ledger by its
 * primary key (`insert ... on conflict (id) do nothing`) rather than checked with NOT EXISTS, whose OR kept PostgreSQL
 * from an anti-join: it hashed the whole ledger for each batch (a batch of eight took 58 ms with twelve thousand rows;
 * auto_explain, AMD EPYC class). And the function plans without scans, hash joins or merge joins: taking a batch for
 * a hundred rows, PostgreSQL scanned and hashed the day and lease tables whole (perf: hash_bytes, visibility checks of
 * heap pages), 0.6 of PostgreSQL's cores at 1,000 calls/s against 0.4 with index lookups.
 */
export const bookingsByKey: Migration = {
  async up(db) {
    await sql`${sql.raw(applyFunction)}`.execute(db);
  },
};

/*
 * One call per batch, and as few statements as it can: on PGlite every statement costs a few hundred microseconds of
 * the gateway's one thread (WebAssembly), so bookings and returns are one statement with data-modifying CTEs (the ops
 * parsed once), and a grant is three. Row locks (PostgreSQL, `lock_rows`): day rows first, in (actor, day) order,
 * then lease rows, then holder rows (shared, only to reclaim); the heartbeat locks only holder rows and the orphan
 * reclaim day rows then lease rows, so no two of them wait on each other in a cycle. PGlite is one connection and
 * needs none of it.
 */
const applyFunction = `
create or replace function gateway_apply(ops jsonb, default_cap int8, async_commit boolean, at timestamptz, lock_rows boolean, has_moves boolean, has_grants boolean,
                              out op_index int, out spent int8, out cap int8, out granted int8, out holder_lost boolean, out recalled boolean)
returns setof record
language plpgsql
-- A batch names a few rows of each table by key; PostgreSQL cannot see how few (it takes jsonb_to_recordset for 100
-- rows) and joined the day and lease tables by scanning and hashing them whole, every batch.
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
as $$
declare
  o record;
  day_spent int8;
  day_reserved int8;
  alive boolean;
  headroom int8;
begin
  if async_commit then perform set_config('synchronous_commit', 'off', true); end if;
  if lock_rows then
    perform 1 from daily_spend d
      where (d.actor, d.day) in (select t.actor, t.day from jsonb_to_recordset(ops) as t(actor text, day date))
      order by d.actor, d.day for update;
  end if;

  -- Bookings and returns: each takes from its lease what its holder says it takes.
  if has_moves then
    with t as materialized (
      select * from jsonb_to_recordset(ops) as t(op text, holder uuid, actor text, day date, take int8, cost int8, debit boolean, id uuid,
        created_at timestamptz, slot text, model text, kind text, streamed boolean, rate_table_v int, input_tokens int, output_tokens int,
        basis text, intent_id text, goal_id text, kind_route text)
      where t.op <> 'grant'
    ), booked as (
      -- A booking sent again whose first commit landed is in the ledger already: skipped whole, found by its key (one
      -- probe of the primary key each). Checked with NOT EXISTS beside the OR it needed, the planner hashed the whole
      -- ledger for every batch, a cost that grew with the ledger.
      insert into ledger (id, actor, day, created_at, slot, model, kind, streamed, rate_table_v, input_tokens, output_tokens, cost_units, basis, intent_id, goal_id, kind_route)
      select t.id, t.actor, t.day, t.created_at, t.slot, t.model, t.kind, t.streamed, t.rate_table_v, t.input_tokens, t.output_tokens, t.cost, t.basis, t.intent_id, t.goal_id, t.kind_route
      from t where t.debit
      on conflict (id) do nothing
      returning id
    ), applied as (
      select * from t where not t.debit
      union all
      -- Once per id, were a booking in a batch twice.
      (select distinct on (t.id) * from t where t.debit and t.id in (select b.id from booked b))
    ), moves as (
      select t.holder, t.actor, t.day, sum(t.take)::int8 as take, sum(t.cost)::int8 as cost, (count(*) filter (where t.debit))::int as calls
      from applied t group by t.holder, t.actor, t.day
    ), taken as (
      -- A holder never takes more than it was granted, so a lease always covers its take; were it not to, the lease
      -- is left alone (nothing is taken, nothing given back to the day): never fewer reserved units than leased.
      update budget_leases l set units = l.units - m.take
      from moves m
      where (l.holder, l.actor, l.day) = (m.holder, m.actor, m.day) and l.units >= m.take
      returning l.holder, l.actor, l.day, m.take as units
    )
    update daily_spend d
      set spent_units = d.spent_units + x.cost, reserved_units = d.reserved_units - x.taken, calls = d.calls + x.calls
      from (select m.actor, m.day, sum(m.cost)::int8 as cost, coalesce(sum(tk.units), 0)::int8 as taken, sum(m.calls)::int as calls
            from moves m left join taken tk on (tk.holder, tk.actor, tk.day) = (m.holder, m.actor, m.day)
            group by m.actor, m.day) x
      where (d.actor, d.day) = (x.actor, x.day);
    -- Slices given back on a recall: the instance that was refused is waiting to ask again.
    perform pg_notify(current_schema() || '.gateway_budget_returned', r.actor || ' ' || r.day::text)
      from (select distinct t.actor, t.day from jsonb_to_recordset(ops) as t(op text, actor text, day date, announce boolean) where t.op = 'return' and t.announce) r;
  end if;

  if not has_grants then return; end if;
  for o in select * from jsonb_to_recordset(ops) as t(i int, op text, holder uuid, actor text, day date, need int8, want int8, recall boolean)
           where t.op = 'grant' order by t.actor, t.day, t.i loop
    op_index := o.i;
    granted := 0;
    holder_lost := false;
    recalled := false;
    select d.spent_units, d.reserved_units, coalesce(a.limit_units, default_cap),
           exists (select 1 from lease_holders h where h.holder = o.holder and h.expires_at >= at)
      into day_spent, day_reserved, cap, alive
      from daily_spend d left join actor_caps a on a.actor = d.actor
      where d.actor = o.actor and d.day = o.day for update of d;
    if not found then
      insert into daily_spend (actor, day, spent_units, reserved_units, calls) values (o.actor, o.day, 0, 0, 0) on conflict do nothing;
      select d.spent_units, d.reserved_units, coalesce(a.limit_units, default_cap),
             exists (select 1 from lease_holders h where h.holder = o.holder and h.expires_at >= at)
        into day_spent, day_reserved, cap, alive
        from daily_spend d left join actor_caps a on a.actor = d.actor
        where d.actor = o.actor and d.day = o.day for update of d;
    end if;
    spent := day_spent;
    -- Only a live holder gets budget: one whose heartbeat lapsed is gone for good, and its leases are reclaimable.
    if not alive then
      holder_lost := true;
      return next;
      continue;
    end if;
    headroom := cap - day_spent - day_reserved;
    if cap > 0 and headroom < o.need then
      -- Leases of holders that stopped beating (a crashed instance) come back before anyone is refused. The holders
      -- are share-locked first, so none of them can renew between the check and the delete.
      perform 1 from lease_holders h
        where h.holder in (select l.holder from budget_leases l where l.actor = o.actor and l.day = o.day and l.holder <> o.holder) for share;
      with gone as (
        delete from budget_leases l
          where l.actor = o.actor and l.day = o.day and l.holder <> o.holder
            and not exists (select 1 from lease_holders h where h.holder = l.holder and h.expires_at >= at)
          returning l.units)
      update daily_spend d set reserved_units = d.reserved_units - (select coalesce(sum(g.units), 0)::int8 from gone g)
        where d.actor = o.actor and d.day = o.day
        returning d.reserved_units into day_reserved;
      headroom := cap - day_spent - day_reserved;
    end if;
    if cap = 0 or headroom < o.need then
      -- Refused while others hold unused slices of this day: ask them to give theirs back for the next call.
      if o.recall and exists (select 1 from budget_leases l where l.actor = o.actor and l.day = o.day and l.holder <> o.holder and l.units > 0) then
        perform pg_notify(current_schema() || '.gateway_budget_recall', o.actor || ' ' || o.day::text);
        recalled := true;
      end if;
    else
      granted := least(o.want, headroom);
      update daily_spend d set reserved_units = d.reserved_units + granted where d.actor = o.actor and d.day = o.day;
      insert into budget_leases as l (holder, actor, day, units) values (o.holder, o.actor, o.day, granted)
        on conflict (holder, actor, day) do update set units = l.units + excluded.units;
    end if;
    return next;
  end loop;
end $$`;

/**
 * Renews (or first registers) a holder, drops its empty leases and ends the holders whose heartbeat lapsed. A lapsed holder cannot renew:
 * expiry is final, so its leases can be reclaimed without racing a late heartbeat. False: the holder had lapsed.
 */
const heartbeatFunction = `
create function gateway_lease_heartbeat(lease_holder uuid, register boolean, at timestamptz, ttl_ms int)
returns boolean
language plpgsql as $$
declare
  alive boolean;
begin
  if register then
    insert into lease_holders (holder, expires_at) values (lease_holder, at + ttl_ms * interval '1 millisecond');
    alive := true;
  else
    update lease_holders set expires_at = at + ttl_ms * interval '1 millisecond' where holder = lease_holder and expires_at >= at;
    alive := found;
    -- Slices given back or spent to nothing leave empty rows behind; a grant makes them again when needed.
    delete from budget_leases l where l.holder = lease_holder and l.units = 0;
  end if;
  delete from lease_holders where expires_at < at;
  return alive;
end $$`;

/** Gives back to their day rows the leases whose holder is gone (expired and ended, or retired at shutdown). */
const reclaimFunction = `
create function gateway_reclaim_orphan_leases()
returns int
language plpgsql as $$
declare
  reclaimed int;
begin
  perform 1 from daily_spend d
    where (d.actor, d.day) in (select l.actor, l.day from budget_leases l where not exists (select 1 from lease_holders h where h.holder = l.holder))
    order by d.actor, d.day for update;
  with gone as (
    delete from budget_leases l where not exists (select 1 from lease_holders h where h.holder = l.holder)
    returning l.actor, l.day, l.units
  ), per_day as (select g.actor, g.day, sum(g.units)::int8 as units, count(*)::int as leases from gone g group by g.actor, g.day),
  returned as (
    update daily_spend d set reserved_units = d.reserved_units - p.units from per_day p where (d.actor, d.day) = (p.actor, p.day)
    returning p.leases
  )
  select coalesce(sum(r.leases), 0)::int into reclaimed from returned r;
  return reclaimed;
end $$`;
