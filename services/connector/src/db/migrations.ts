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

export const migrations: Record<string, Migration> = {
  '0001_auth_nonces': nonceMigration,
  '0002_connections': connections,
};
