import type { Clock } from '@platform/kit/clock';
import { type Kysely, sql } from 'kysely';
import type { ConnectorSchema } from '../db/schema.ts';
import type { Sealed } from '../vault/vault.ts';

/** A begun flow as consumed: whose it is, its sealed PKCE verifier, and whether it was still live. */
export interface ConsumedState {
  owner: string;
  connector: string;
  verifier: Sealed;
  live: boolean;
}

/** The begun connect flows. All their SQL; rows are found only by the SHA-256 of their state. */
export class ConnectStatesRepository {
  readonly #db: Kysely<ConnectorSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<ConnectorSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Stores a begun flow expiring `ttlMs` from now (the database's now); answers that expiry. */
  async create(row: { stateHash: Buffer; owner: string; connector: string; verifier: Sealed; ttlMs: number }): Promise<Date> {
    const now = this.#clock.sqlNow();
    const inserted = await this.#db
      .insertInto('connect_states')
      .values({
        state_hash: row.stateHash,
        owner: row.owner,
        connector: row.connector,
        key_id: row.verifier.keyId,
        iv: row.verifier.iv,
        ciphertext: row.verifier.ciphertext,
        tag: row.verifier.tag,
        expires_at: sql<Date>`${now} + make_interval(secs => ${row.ttlMs / 1000})`,
        created_at: now,
      })
      .returning('expires_at')
      .executeTakeFirstOrThrow();
    return inserted.expires_at;
  }

  /** How many flows `owner` has begun that are neither finished nor expired. */
  async countLive(owner: string): Promise<number> {
    const row = await this.#db
      .selectFrom('connect_states')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('owner', '=', owner)
      .where('expires_at', '>', this.#clock.sqlNow())
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * Deletes the flow and answers it, in one statement: of two callbacks with the same state one gets the row, the
   * other nothing. An expired row is consumed too (and answered with `live: false`), so it can never be tried again.
   */
  async consume(stateHash: Buffer): Promise<ConsumedState | undefined> {
    const row = await this.#db
      .deleteFrom('connect_states')
      .where('state_hash', '=', stateHash)
      .returning(['owner', 'connector', 'key_id', 'iv', 'ciphertext', 'tag', sql<boolean>`expires_at > ${this.#clock.sqlNow()}`.as('live')])
      .executeTakeFirst();
    if (!row) return undefined;
    const verifier = { keyId: row.key_id, iv: buffer(row.iv), ciphertext: buffer(row.ciphertext), tag: buffer(row.tag) };
    return { owner: row.owner, connector: row.connector, verifier, live: row.live };
  }

  /** Deletes flows past their expiry (abandoned in the browser); answers how many. */
  async purgeExpired(): Promise<number> {
    const result = await this.#db.deleteFrom('connect_states').where('expires_at', '<=', this.#clock.sqlNow()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function buffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
