import { randomUUID } from 'node:crypto';
import type { Clock } from '@platform/kit/clock';
import { uuidv7 } from '@platform/kit/ids';
import { type Kysely, sql } from 'kysely';
import type { ConnectionStatus, ConnectorSchema } from '../db/schema.ts';
import type { Sealed, Vault } from '../vault/vault.ts';
import { type Credential, decodeCredential, encodeCredential } from './credential.ts';

/** A connection as the owner may see it: no sealed columns, so nothing secret can be serialised by mistake. */
export interface ConnectionSummary {
  id: string;
  connector: string;
  status: ConnectionStatus;
  scopes: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** A row under a retired key, as the re-seal reads it. */
export interface SealedRow {
  id: string;
  owner: string;
  connector: string;
  sealed: Sealed;
}

/** A connection from one select: its summary, the IV naming this exact sealed value (for guarded writes), and its credential still sealed. */
export interface FoundConnection {
  connection: ConnectionSummary;
  /** Unique per seal, so it names this credential: writes guarded on it miss if anyone replaced the row. */
  iv: Buffer;
  unseal: () => Credential;
}

const summaryColumns = ['id', 'connector', 'status', 'scopes', 'created_at', 'updated_at'] as const;
/** A row no instance is refreshing. */
const noClaim = { refresh_claimed_until: null, refresh_claim: null };

/** Connections and their sealed credentials: seals on write, unseals on read. All of the service's SQL on them. */
export class ConnectionsRepository {
  readonly #db: Kysely<ConnectorSchema>;
  readonly #vault: Vault;
  readonly #clock: Clock;

  constructor(db: Kysely<ConnectorSchema>, vault: Vault, clock: Clock) {
    this.#db = db;
    this.#vault = vault;
    this.#clock = clock;
  }

  /** Stores (or replaces) the owner's credential for a connector, sealed with the current key; status `connected`. */
  async save(owner: string, connector: string, scopes: readonly string[], credential: Credential): Promise<ConnectionSummary> {
    const sealed = this.#vault.seal(encodeCredential(credential), { owner, connector });
    const now = this.#clock.sqlNow();
    // A new credential ends any refresh in flight for the old one: that refresher's guarded write will miss.
    const columns = { status: 'connected' as const, scopes: JSON.stringify(scopes), ...sealedColumns(sealed), updated_at: now, ...noClaim };
    const row = await this.#db
      .insertInto('connections')
      .values({ id: uuidv7(this.#clock.now().getTime()), owner, connector, ...columns, created_at: now })
      .onConflict((conflict) => conflict.columns(['owner', 'connector']).doUpdateSet(columns))
      .returning(summaryColumns)
      .executeTakeFirstOrThrow();
    return summaryOf(row);
  }

  /** The owner's connections, oldest first. */
  async listOwned(owner: string): Promise<ConnectionSummary[]> {
    const rows = await this.#db.selectFrom('connections').select(summaryColumns).where('owner', '=', owner).orderBy('id').execute();
    return rows.map(summaryOf);
  }

  /** The connection and its unsealed credential; throws the vault's error if the key is gone or the row altered. */
  async open(owner: string, connector: string): Promise<{ connection: ConnectionSummary; credential: Credential } | undefined> {
    const found = await this.find(owner, connector);
    return found && { connection: found.connection, credential: found.unseal() };
  }

  /**
   * The connection from one select, with its credential still sealed: callers check status and scopes first and
   * decrypt only a call that passes (`unseal` throws the vault's error if the key is gone or the row altered).
   */
  async find(owner: string, connector: string): Promise<FoundConnection | undefined> {
    const row = await this.#db
      .selectFrom('connections')
      .select([...summaryColumns, 'key_id', 'iv', 'ciphertext', 'tag'])
      .where('owner', '=', owner)
      .where('connector', '=', connector)
      .executeTakeFirst();
    if (!row) return undefined;
    const unseal = () => {
      const plaintext = this.#vault.unseal(sealedOf(row), { owner, connector });
      try {
        return decodeCredential(plaintext);
      } finally {
        plaintext.fill(0);
      }
    };
    return { connection: summaryOf(row), iv: buffer(row.iv), unseal };
  }

  /**
   * Claims the right to refresh the credential sealed under `iv` for `leaseMs` (database time), unless another
   * instance holds an unexpired claim or the row no longer holds that credential. Answers the claim's token, which
   * the claimant's later writes are guarded on; a single statement, so no transaction waits on the provider.
   */
  async claimRefresh(id: string, iv: Buffer, leaseMs: number): Promise<string | undefined> {
    const now = this.#clock.sqlNow();
    const claim = randomUUID();
    const row = await this.#db
      .updateTable('connections')
      .set({ refresh_claimed_until: sql<Date>`${now} + make_interval(secs => ${leaseMs / 1000})`, refresh_claim: claim })
      .where('id', '=', id)
      .where('iv', '=', iv)
      .where('status', '=', 'connected')
      .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<=', now)]))
      .returning('id')
      .executeTakeFirst();
    return row && claim;
  }

  /** Gives a claim back early (a failed refresh), if it is still this one: a later claimant's is left alone. */
  async releaseRefresh(id: string, claim: string): Promise<boolean> {
    const result = await this.#db.updateTable('connections').set(noClaim).where('id', '=', id).where('refresh_claim', '=', claim).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Stores a refreshed credential (sealed with the current key) only if `claim` is still the row's, and ends it.
   * Guarded on the claim, not the IV: a re-seal meanwhile (same credential, new IV) must not throw a rotated refresh
   * token away. False when a reconnect (which clears the claim) or a later claimant replaced it meanwhile.
   */
  async replaceCredential(
    id: string,
    binding: { owner: string; connector: string },
    claim: string,
    credential: Credential,
    scopes: readonly string[] | undefined,
  ): Promise<boolean> {
    const sealed = this.#vault.seal(encodeCredential(credential), binding);
    const result = await this.#db
      .updateTable('connections')
      .set({
        ...sealedColumns(sealed),
        ...(scopes ? { scopes: JSON.stringify(scopes) } : {}),
        updated_at: this.#clock.sqlNow(),
        ...noClaim,
      })
      .where('id', '=', id)
      .where('refresh_claim', '=', claim)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Marks the connection `needs_reconnect` if `claim` is still the row's (a reconnect since is left alone). */
  async markNeedsReconnect(id: string, claim: string): Promise<boolean> {
    const result = await this.#db
      .updateTable('connections')
      .set({ status: 'needs_reconnect', updated_at: this.#clock.sqlNow(), ...noClaim })
      .where('id', '=', id)
      .where('refresh_claim', '=', claim)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Deletes the connection if it still holds the credential under `iv`. */
  async removeIfUnchanged(id: string, iv: Buffer): Promise<boolean> {
    const result = await this.#db.deleteFrom('connections').where('id', '=', id).where('iv', '=', iv).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async setStatus(owner: string, connector: string, status: ConnectionStatus): Promise<boolean> {
    const result = await this.#db
      .updateTable('connections')
      .set({ status, updated_at: this.#clock.sqlNow() })
      .where('owner', '=', owner)
      .where('connector', '=', connector)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async remove(owner: string, connector: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('connections').where('owner', '=', owner).where('connector', '=', connector).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Up to `limit` rows sealed with one of `keyIds`, after `afterId` in id order (keyset paging: no row twice). */
  async sealedUnder(keyIds: readonly string[], afterId: string | undefined, limit: number): Promise<SealedRow[]> {
    if (keyIds.length === 0) return [];
    let query = this.#db
      .selectFrom('connections')
      .select(['id', 'owner', 'connector', 'key_id', 'iv', 'ciphertext', 'tag'])
      .where('key_id', 'in', keyIds)
      .orderBy('id')
      .limit(limit);
    if (afterId !== undefined) query = query.where('id', '>', afterId);
    const rows = await query.execute();
    return rows.map((row) => ({ id: row.id, owner: row.owner, connector: row.connector, sealed: sealedOf(row) }));
  }

  /** Counts of rows per key id (no secrets): what the re-seal reports and tests check. */
  /** How many connections wait for their user to consent again (the metrics gauge, read at scrape time). */
  async countNeedingReconnect(): Promise<number> {
    const row = await this.#db
      .selectFrom('connections')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '=', 'needs_reconnect')
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  async countByKey(): Promise<Record<string, number>> {
    const rows = await this.#db
      .selectFrom('connections')
      .select((eb) => ['key_id', eb.fn.countAll<string>().as('count')])
      .groupBy('key_id')
      .execute();
    return Object.fromEntries(rows.map((row) => [row.key_id, Number(row.count)]));
  }

  /**
   * Replaces a row's sealed value only if it still holds exactly `previous` (same key id and IV; an IV is unique
   * per seal). A concurrent `save`, even one by an instance still sealing with the old key, wins: false here.
   */
  async replaceSealed(id: string, previous: Sealed, next: Sealed): Promise<boolean> {
    const result = await this.#db
      .updateTable('connections')
      .set(sealedColumns(next))
      .where('id', '=', id)
      .where('key_id', '=', previous.keyId)
      .where('iv', '=', previous.iv)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}

function sealedColumns(sealed: Sealed) {
  return { key_id: sealed.keyId, iv: sealed.iv, ciphertext: sealed.ciphertext, tag: sealed.tag };
}

function buffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function sealedOf(row: { key_id: string; iv: Uint8Array; ciphertext: Uint8Array; tag: Uint8Array }): Sealed {
  return { keyId: row.key_id, iv: buffer(row.iv), ciphertext: buffer(row.ciphertext), tag: buffer(row.tag) };
}

function summaryOf(row: { id: string; connector: string; status: ConnectionStatus; scopes: string[]; created_at: Date; updated_at: Date }): ConnectionSummary {
  return { id: row.id, connector: row.connector, status: row.status, scopes: row.scopes, createdAt: row.created_at, updatedAt: row.updated_at };
}
