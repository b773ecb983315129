import type { Clock } from '@platform/kit/clock';
import type { Kysely } from 'kysely';
import type { ChainProfileRow, ContractsSchema } from '../db/schema.ts';

const activeChainKey = 'active_chain';

/** Registered chain profiles and the persisted choice of active chain. */
export class ChainsRepository {
  readonly #db: Kysely<ContractsSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<ContractsSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  list(): Promise<ChainProfileRow[]> {
    return this.#db.selectFrom('chain_profiles').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  find(id: string): Promise<ChainProfileRow | undefined> {
    return this.#db.selectFrom('chain_profiles').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Inserts the profile unless the id is taken; returns the row stored under the id either way. */
  async insert(profile: { id: string; name: string; rpc_url: string; chain_id: number; explorer: string | null }): Promise<ChainProfileRow> {
    await this.#db
      .insertInto('chain_profiles')
      .values({ ...profile, created_at: this.#clock.sqlNow() })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .execute();
    return (await this.find(profile.id)) as ChainProfileRow;
  }

  async activeChain(): Promise<string | undefined> {
    const row = await this.#db.selectFrom('engine_state').select('value').where('key', '=', activeChainKey).executeTakeFirst();
    return row?.value;
  }

  async setActiveChain(id: string): Promise<void> {
    await this.#db
      .insertInto('engine_state')
      .values({ key: activeChainKey, value: id, updated_at: this.#clock.sqlNow() })
      .onConflict((conflict) => conflict.column('key').doUpdateSet({ value: id, updated_at: this.#clock.sqlNow() }))
      .execute();
  }
}
