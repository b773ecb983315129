import { nonceMigration } from '@platform/kit/auth/nonce-store';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

const connections: Migration = {
  async up(db) {
    await db.schema
      .createTable('connections')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('connected', 'needs_reconnect')`))
      .addColumn('scopes', 'jsonb', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('iv', 'bytea', (c) => c.notNull().check(sql`length(iv) = 12`))
      .addColumn('ciphertext', 'bytea', (c) => c.notNull())
      .addColumn('tag', 'bytea', (c) => c.notNull().check(sql`length(tag) = 16`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .addUniqueConstraint('connections_owner_connector', ['owner', 'connector'])
      .execute();
    // The re-seal's scan: rows under a retired key, in id order.
    await sql`create index connections_key on connections (key_id, id)`.execute(db);
  },
};

const connectStates: Migration = {
  async up(db) {
    await db.schema
      .createTable('connect_states')
      .addColumn('state_hash', 'bytea', (c) => c.primaryKey().check(sql`length(state_hash) = 32`))
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('iv', 'bytea', (c) => c.notNull().check(sql`length(iv) = 12`))
      .addColumn('ciphertext', 'bytea', (c) => c.notNull())
      .addColumn('tag', 'bytea', (c) => c.notNull().check(sql`length(tag) = 16`))
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
    // The purge of abandoned flows.
    await sql`create index connect_states_expires on connect_states (expires_at)`.execute(db);
  },
};

const refreshLease: Migration = {
  async up(db) {
    await db.schema.alterTable('connections').addColumn('refresh_claimed_until', 'timestamptz').execute();
  },
};

/** The per-owner cap on open connect flows counts an owner's live rows on every begin. */
const connectStatesByOwner: Migration = {
  async up(db) {
    await sql`create index connect_states_owner on connect_states (owner, expires_at)`.execute(db);
  },
};

/**
 * Who holds the refresh lease: a random token per claim. Releases and the refreshed write are guarded on it, never on
 * the lease's end time (written in database time, microseconds on PostgreSQL, read back as a millisecond date).
 */
const refreshClaim: Migration = {
  async up(db) {
    await db.schema.alterTable('connections').addColumn('refresh_claim', 'uuid').execute();
  },
};

/** The metrics gauge of connections waiting for a reconnect counts them at every scrape: from this small index alone. */
const needsReconnectIndex: Migration = {
  async up(db) {
    await sql`create index connections_needs_reconnect on connections (id) where status = 'needs_reconnect'`.execute(db);
  },
};

export const migrations: Record<string, Migration> = {
  '0001_auth_nonces': nonceMigration,
  '0002_connections': connections,
  '0003_connect_states': connectStates,
  '0004_refresh_lease': refreshLease,
  '0005_connect_states_owner': connectStatesByOwner,
  '0006_refresh_claim': refreshClaim,
  '0007_needs_reconnect_index': needsReconnectIndex,
};
