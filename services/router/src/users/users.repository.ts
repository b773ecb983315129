import type { Clock } from '@platform/kit/clock';
import { notify } from '@platform/kit/db/channels';
import { type Kysely, sql } from 'kysely';
import type { RouterSchema, UserRow, UserState } from '../db/schema.ts';

export const usersChannel = 'router_users';

export interface Profile {
  email?: string | undefined;
  handle?: string | undefined;
  region?: string | undefined;
}

export interface EnvironmentFields {
  environment_id: string;
  address: string | null;
  volume: string | null;
}

/** The user rows; every write also notifies other router instances, which drop their cached copy. */
export class UsersRepository {
  readonly #db: Kysely<RouterSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<RouterSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** How many users are in each state (`router_environments`, read at scrape time: one grouped count). */
  async countByState(): Promise<Map<UserState, number>> {
    const rows = await this.#db
      .selectFrom('users')
      .select(['state', sql<number>`count(*)::int`.as('count')])
      .groupBy('state')
      .execute();
    return new Map(rows.map((row) => [row.state, Number(row.count)]));
  }

  get(id: string): Promise<UserRow | undefined> {
    return this.#db.selectFrom('users').selectAll().where('idp_user_id', '=', id).executeTakeFirst();
  }

  /**
   * Inserts the user as `provisioning` unless a row exists: of concurrent callers (on any instance) exactly one gets
   * `created: true` and provisions; the others get the row as it is.
   */
  async claimProvisioning(id: string, profile: Profile, provider: string, defaultRegion: string): Promise<{ row: UserRow; created: boolean }> {
    const now = this.#clock.now();
    const inserted = await this.#db
      .insertInto('users')
      .values({
        idp_user_id: id,
        email: profile.email ?? null,
        handle: profile.handle ?? null,
        region: profile.region ?? defaultRegion,
        state: 'provisioning',
        provider,
        environment_id: null,
        address: null,
        volume: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column('idp_user_id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) {
      await this.#notify(id);
      return { row: inserted, created: true };
    }
    return { row: (await this.get(id)) as UserRow, created: false };
  }

  /** Takes over a provisioning row left too long by an instance that stopped (its `updated_at` is the lease). */
  async takeOverProvisioning(id: string, staleBefore: Date): Promise<UserRow | undefined> {
    const row = await this.#db
      .updateTable('users')
      .set({ updated_at: this.#clock.now() })
      .where('idp_user_id', '=', id)
      .where('state', '=', 'provisioning')
      .where('updated_at', '<', staleBefore)
      .returningAll()
      .executeTakeFirst();
    return row;
  }

  async markActive(id: string, environment: EnvironmentFields): Promise<UserRow> {
    return this.#update(id, { state: 'active', ...environment }, ['provisioning']) as Promise<UserRow>;
  }

  async touch(id: string, profile: Profile): Promise<UserRow | undefined> {
    const changes: Partial<Record<'email' | 'handle' | 'region', string>> = {};
    if (profile.email !== undefined) changes.email = profile.email;
    if (profile.handle !== undefined) changes.handle = profile.handle;
    if (profile.region !== undefined) changes.region = profile.region;
    return this.#update(id, changes, ['active', 'provisioning', 'suspended']);
  }

  /** Moves the state when the user is in one of `from`; undefined when not (the caller says why). */
  setState(id: string, state: UserState, from: readonly UserState[]): Promise<UserRow | undefined> {
    return this.#update(id, { state }, from);
  }

  async #update(id: string, changes: Record<string, unknown>, from: readonly UserState[]): Promise<UserRow | undefined> {
    const row = await this.#db
      .updateTable('users')
      .set({ ...changes, updated_at: this.#clock.now() })
      .where('idp_user_id', '=', id)
      .where('state', 'in', [...from])
      .returningAll()
      .executeTakeFirst();
    if (row) await this.#notify(id);
    return row;
  }

  async #notify(id: string): Promise<void> {
    await sql`select ${notify(usersChannel, id)}`.execute(this.#db);
  }
}
