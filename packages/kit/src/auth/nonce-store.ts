import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { repeatEvery } from '../lifecycle.ts';

/** The table every service with the agent handshake keeps; include `nonceMigration` in its migrations. */
export interface AuthNonceTable {
  nonce: string;
  did: string;
  expires_at: Date;
}

export interface NonceSchema {
  auth_nonces: AuthNonceTable;
}

export const nonceMigration: Migration = {
  async up(db) {
    await db.schema
      .createTable('auth_nonces')
      .addColumn('nonce', 'text', (column) => column.primaryKey())
      .addColumn('did', 'text', (column) => column.notNull())
      .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('auth_nonces_expires_at').on('auth_nonces').column('expires_at').execute();
  },
};

/**
 * Challenge nonces in the service's database, so any instance can verify a challenge another issued.
 * Expiry is judged by `clock.sqlNow()` (the database's clock in production).
 */
export class NonceStore {
  readonly #db: Kysely<NonceSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<NonceSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Issues a fresh nonce (24 random bytes, base64url) bound to one DID. */
  async issue(did: string, lifetimeSeconds: number): Promise<string> {
    const nonce = randomBytes(24).toString('base64url');
    await this.#db
      .insertInto('auth_nonces')
      .values({ nonce, did, expires_at: sql<Date>`${this.#clock.sqlNow()} + make_interval(secs => ${lifetimeSeconds})` })
      .execute();
    return nonce;
  }

  /** Consumes a nonce in one statement: true only for the first caller with the right DID before expiry. */
  async consume(nonce: string, did: string): Promise<boolean> {
    const consumed = await this.#db
      .deleteFrom('auth_nonces')
      .where('nonce', '=', nonce)
      .where('did', '=', did)
      .where('expires_at', '>', this.#clock.sqlNow())
      .returning('nonce')
      .executeTakeFirst();
    return consumed !== undefined;
  }

  /** Purges expired nonces on a timer (the spec's every 5 minutes); returns the function that stops it. */
  purgeEvery(intervalMs: number, logger: Logger): () => void {
    return repeatEvery(intervalMs, () => this.purgeExpired(), logger, 'nonce purge');
  }

  /** Deletes expired nonces; returns how many. */
  async purgeExpired(): Promise<number> {
    const result = await this.#db.deleteFrom('auth_nonces').where('expires_at', '<=', this.#clock.sqlNow()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
