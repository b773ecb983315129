import type { Clock } from '@platform/kit/clock';
import { uuidv7 } from '@platform/kit/ids';
import { type Kysely, sql } from 'kysely';
import type { ContractsSchema, WalletRow } from '../db/schema.ts';

export type SpendReservation = { ok: true; id: string } | { ok: false; spentWei: bigint };

/** Wallet rows and the spend ledger behind the daily cap. */
export class WalletsRepository {
  readonly #db: Kysely<ContractsSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<ContractsSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  find(did: string): Promise<WalletRow | undefined> {
    return this.#db.selectFrom('wallets').selectAll().where('did', '=', did).executeTakeFirst();
  }

  /** Stores a new wallet unless the DID already has one (two first uses at once); returns the one kept. */
  async insertIfAbsent(wallet: { did: string; address: string; sealed_key: string; key_id: string }): Promise<WalletRow> {
    await this.#db
      .insertInto('wallets')
      .values({ ...wallet, created_at: this.#clock.sqlNow() })
      .onConflict((conflict) => conflict.column('did').doNothing())
      .execute();
    return (await this.find(wallet.did)) as WalletRow;
  }

  /**
   * Records a spend of up to `maxCostWei` unless it would take the wallet's last 24 hours past `dailyCapWei`.
   * The wallet row is locked meanwhile, so two spends at once cannot both pass on the same headroom.
   */
  async reserveSpend(spend: { did: string; chainId: number; purpose: string; maxCostWei: bigint; dailyCapWei: bigint }): Promise<SpendReservation> {
    return this.#db.transaction().execute(async (trx) => {
      await trx.selectFrom('wallets').select('did').where('did', '=', spend.did).forUpdate().executeTakeFirst();
      const row = await trx
        .selectFrom('wallet_spends')
        .select(sql<string>`coalesce(sum(max_cost_wei), 0)::text`.as('spent'))
        .where('did', '=', spend.did)
        .where('created_at', '>', sql<Date>`${this.#clock.sqlNow()} - interval '24 hours'`)
        .executeTakeFirst();
      const spentWei = BigInt(row?.spent ?? '0');
      if (spentWei + spend.maxCostWei > spend.dailyCapWei) return { ok: false, spentWei };
      const id = uuidv7(this.#clock.now().getTime());
      await trx
        .insertInto('wallet_spends')
        .values({
          id,
          did: spend.did,
          chain_id: spend.chainId,
          purpose: spend.purpose,
          max_cost_wei: spend.maxCostWei.toString(),
          created_at: this.#clock.sqlNow(),
        })
        .execute();
      return { ok: true, id };
    });
  }

  async attachTransaction(spendId: string, txHash: string): Promise<void> {
    await this.#db.updateTable('wallet_spends').set({ tx_hash: txHash }).where('id', '=', spendId).execute();
  }

  /** Gives the headroom back when nothing was broadcast. */
  async releaseSpend(spendId: string): Promise<void> {
    await this.#db.deleteFrom('wallet_spends').where('id', '=', spendId).execute();
  }
}
