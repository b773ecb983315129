import type { Clock } from '@platform/kit/clock';
import { type Kysely, sql } from 'kysely';
import type { ContractsSchema, DeploymentRow, DeploymentStatus, DeploymentTable } from '../db/schema.ts';

/** What a deploy claims: the table's own columns, before status, transaction and times are known. */
export type NewDeployment = Pick<
  DeploymentTable,
  'idempotency_key' | 'chain_profile' | 'deployer_did' | 'deployer_address' | 'request_hash' | 'project_id' | 'source' | 'contract'
> & { chain_id: number };

/** Deployment records: claimed before signing, so a key can never lead to two transactions. */
export class DeploymentsRepository {
  readonly #db: Kysely<ContractsSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<ContractsSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Inserts a `pending` record; when the key is already taken on this chain, returns that record instead. */
  async claim(deployment: NewDeployment): Promise<{ claimed: boolean; row: DeploymentRow }> {
    const inserted = await this.#db
      .insertInto('deployments')
      .values({ ...deployment, status: 'pending', created_at: this.#clock.sqlNow(), updated_at: this.#clock.sqlNow() })
      .onConflict((conflict) => conflict.columns(['chain_id', 'idempotency_key']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { claimed: true, row: inserted };
    return { claimed: false, row: (await this.find(deployment.chain_id, deployment.idempotency_key)) as DeploymentRow };
  }

  find(chainId: number, idempotencyKey: string): Promise<DeploymentRow | undefined> {
    return this.#db
      .selectFrom('deployments')
      .selectAll()
      .where('chain_id', '=', BigInt(chainId))
      .where('idempotency_key', '=', idempotencyKey)
      .executeTakeFirst();
  }

  /** The deployment that put a contract at this address on this chain, for decoding calls to it. */
  findByAddress(chainId: number, address: string): Promise<DeploymentRow | undefined> {
    return this.#db
      .selectFrom('deployments')
      .selectAll()
      .where('chain_id', '=', BigInt(chainId))
      .where(sql`lower(address)`, '=', address.toLowerCase())
      .where('address', 'is not', null)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** Stores the signed transaction before it is sent: a crash after this point re-sends these bytes, never new ones. */
  async markSigned(chainId: number, idempotencyKey: string, txHash: string, rawTx: string): Promise<void> {
    await this.#update(chainId, idempotencyKey, { status: 'submitted', tx_hash: txHash, raw_tx: rawTx });
  }

  async markMined(
    chainId: number,
    idempotencyKey: string,
    outcome: { status: DeploymentStatus; address: string | null; blockNumber: bigint; gasUsed: bigint },
  ): Promise<void> {
    await this.#update(chainId, idempotencyKey, {
      status: outcome.status,
      address: outcome.address,
      block_number: outcome.blockNumber,
      gas_used: outcome.gasUsed,
      raw_tx: null,
    });
  }

  /** Frees the key when nothing was broadcast (refused by policy, estimate or node), so the caller may retry it. */
  async release(chainId: number, idempotencyKey: string): Promise<void> {
    await this.#db
      .deleteFrom('deployments')
      .where('chain_id', '=', BigInt(chainId))
      .where('idempotency_key', '=', idempotencyKey)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Forgets a signed transaction the node refused outright: it was never broadcast, so the key is free again. */
  async forgetRefused(chainId: number, idempotencyKey: string): Promise<void> {
    await this.#db.deleteFrom('deployments').where('chain_id', '=', BigInt(chainId)).where('idempotency_key', '=', idempotencyKey).execute();
  }

  /** Newest first; `before` is the seq of the last row of the previous page. */
  list(filter: { chainId?: number | undefined; deployer?: string | undefined; before?: bigint | undefined; limit: number }): Promise<DeploymentRow[]> {
    let query = this.#db.selectFrom('deployments').selectAll();
    if (filter.chainId !== undefined) query = query.where('chain_id', '=', BigInt(filter.chainId));
    if (filter.deployer !== undefined) query = query.where('deployer_did', '=', filter.deployer);
    if (filter.before !== undefined) query = query.where('seq', '<', filter.before);
    return query.orderBy('seq', 'desc').limit(filter.limit).execute();
  }

  async #update(chainId: number, idempotencyKey: string, values: Partial<Omit<DeploymentRow, 'chain_id' | 'idempotency_key'>>): Promise<void> {
    await this.#db
      .updateTable('deployments')
      .set({ ...values, updated_at: this.#clock.sqlNow() })
      .where('chain_id', '=', BigInt(chainId))
      .where('idempotency_key', '=', idempotencyKey)
      .execute();
  }
}
