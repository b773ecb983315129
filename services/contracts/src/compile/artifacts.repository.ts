import type { Clock } from '@platform/kit/clock';
import type { Kysely } from 'kysely';
import type { ArtifactRow, ContractsSchema } from '../db/schema.ts';
import type { CompiledContract } from './compile-product.ts';

/** A contract named by the caller: `Token`, or `src/Token.sol:Token` when two files define the same name. */
export function splitContractName(name: string): { source: string | undefined; name: string } {
  const colon = name.lastIndexOf(':');
  return colon === -1 ? { source: undefined, name } : { source: name.slice(0, colon), name: name.slice(colon + 1) };
}

/** Every project's latest successful build, one row per contract: what deploy, call and artifact_get read. */
export class ArtifactsRepository {
  readonly #db: Kysely<ContractsSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<ContractsSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Makes `contracts` the project's artifacts; a repeat of the build already stored writes nothing. */
  async replaceProject(projectId: string, buildHash: string, solcVersion: string, contracts: readonly CompiledContract[]): Promise<void> {
    const current = await this.#db.selectFrom('artifacts').select('build_hash').where('project_id', '=', projectId).limit(1).executeTakeFirst();
    if (current?.build_hash === buildHash) return;
    await this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('artifacts').where('project_id', '=', projectId).execute();
      if (contracts.length === 0) return;
      await trx
        .insertInto('artifacts')
        .values(
          contracts.map((contract) => ({
            project_id: projectId,
            source: contract.source,
            name: contract.name,
            build_hash: buildHash,
            solc_version: solcVersion,
            abi: JSON.stringify(contract.abi),
            bytecode: contract.bytecode,
            deployed_bytecode: contract.deployedBytecode,
            created_at: this.#clock.sqlNow(),
          })),
        )
        .execute();
    });
  }

  /** Contracts of a project by name (`Name` or `path:Name`); several when a bare name is defined in several files. */
  async find(projectId: string, contractName: string): Promise<ArtifactRow[]> {
    const { source, name } = splitContractName(contractName);
    let query = this.#db.selectFrom('artifacts').selectAll().where('project_id', '=', projectId).where('name', '=', name);
    if (source !== undefined) query = query.where('source', '=', source);
    return query.orderBy('source').execute();
  }

  /** The project whose latest build most recently defined a contract of this name, for calls naming only a contract. */
  async latestByName(contractName: string): Promise<ArtifactRow[]> {
    const { source, name } = splitContractName(contractName);
    let query = this.#db.selectFrom('artifacts').selectAll().where('name', '=', name);
    if (source !== undefined) query = query.where('source', '=', source);
    return query.orderBy('created_at', 'desc').limit(2).execute();
  }
}
