import { nonceMigration } from '@platform/kit/auth/nonce-store';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

const alarms: Migration = {
  async up(db) {
    await db.schema
      .createTable('alarms')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('owner_did', 'text', (c) => c.notNull())
      .addColumn('owner_user_id', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('once', 'cron')`))
      .addColumn('cron_expr', 'text', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('next_fire_at', 'timestamptz', (c) => c.notNull())
      .addColumn('occurrence_at', 'timestamptz', (c) => c.notNull())
      .addColumn('conversation_id', 'text', (c) => c.notNull())
      .addColumn('wake_message', 'text', (c) => c.notNull())
      .addColumn('payload', 'jsonb', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'fired', 'cancelled', 'failed')`))
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('max_failures', 'integer', (c) => c.notNull())
      .addColumn('failure_count', 'integer', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('last_error', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('last_fired_at', 'timestamptz')
      .addColumn('fire_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('claim_token', 'uuid')
      .addColumn('claimed_until', 'timestamptz')
      .execute();
    // Idempotency keys are scoped to the owner DID; the empty key means "none".
    await sql`create unique index alarms_owner_idempotency on alarms (owner_did, idempotency_key) where idempotency_key <> ''`.execute(db);
    await sql`create index alarms_owner_recent on alarms (owner_did, created_at desc, id desc)`.execute(db);
    // The dispatcher's scans: due alarms in due order, and claims by lease expiry.
    await sql`create index alarms_due on alarms (next_fire_at) where status = 'active'`.execute(db);
    await sql`create index alarms_leases on alarms (claimed_until) where status = 'active' and claim_token is not null`.execute(db);
  },
};

/**
 * Claims become heap-only (HOT) updates: the claim columns are no longer indexed (a lease is found through the
 * due index, since only due alarms are claimed) and pages keep 30% free, so claiming writes no index entries.
 */
const hotClaims: Migration = {
  async up(db) {
    await sql`drop index alarms_leases`.execute(db);
    await sql`alter table alarms set (fillfactor = 70)`.execute(db);
  },
};

export const migrations: Record<string, Migration> = {
  '0001_auth_nonces': nonceMigration,
  '0002_alarms': alarms,
  '0003_hot_claims': hotClaims,
};
