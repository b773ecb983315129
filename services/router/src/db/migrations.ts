import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

const users: Migration = {
  async up(db) {
    await db.schema
      .createTable('users')
      .addColumn('idp_user_id', 'uuid', (c) => c.primaryKey())
      .addColumn('email', 'text')
      .addColumn('handle', 'text')
      .addColumn('region', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('active', 'provisioning', 'suspended', 'deleted')`))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('environment_id', 'text')
      .addColumn('address', 'text')
      .addColumn('volume', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    // A handle names one live user; a deleted user's handle may be taken again.
    await sql`create unique index users_handle on users (lower(handle)) where handle is not null and state <> 'deleted'`.execute(db);
  },
};

const invites: Migration = {
  async up(db) {
    await db.schema
      .createTable('invites')
      .addColumn('code', 'text', (c) => c.primaryKey())
      .addColumn('uses', 'integer', (c) => c.notNull().check(sql`uses >= 1`))
      .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at', 'timestamptz')
      .addColumn('note', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addCheckConstraint('invites_used_within_uses', sql`used <= uses`)
      .execute();
    await db.schema
      .createTable('invite_redemptions')
      .addColumn('idp_user_id', 'uuid', (c) => c.primaryKey())
      .addColumn('code', 'text', (c) => c.notNull().references('invites.code'))
      .addColumn('redeemed_at', 'timestamptz', (c) => c.notNull())
      .execute();
  },
};

export const migrations: Record<string, Migration> = {
  '0001_users': users,
  '0002_invites': invites,
};
