import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

const artifacts: Migration = {
  async up(db) {
    await db.schema
      .createTable('artifacts')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('build_hash', 'text', (c) => c.notNull())
      .addColumn('solc_version', 'text', (c) => c.notNull())
      .addColumn('abi', 'jsonb', (c) => c.notNull())
      .addColumn('bytecode', 'text', (c) => c.notNull())
      .addColumn('deployed_bytecode', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('artifacts_pk', ['project_id', 'source', 'name'])
      .execute();
    // Lookups by bare contract name within a project.
    await sql`create index artifacts_by_name on artifacts (project_id, name)`.execute(db);
  },
};

const chains: Migration = {
  async up(db) {
    await db.schema
      .createTable('chain_profiles')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('rpc_url', 'text', (c) => c.notNull())
      .addColumn('chain_id', 'int8', (c) => c.notNull())
      .addColumn('explorer', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('engine_state')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
  },
};

const wallets: Migration = {
  async up(db) {
    await db.schema
      .createTable('wallets')
      .addColumn('did', 'text', (c) => c.primaryKey())
      .addColumn('address', 'text', (c) => c.notNull().unique())
      .addColumn('sealed_key', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('wallet_spends')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('did', 'text', (c) => c.notNull().references('wallets.did'))
      .addColumn('chain_id', 'int8', (c) => c.notNull())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('max_cost_wei', sql`numeric(78, 0)`, (c) => c.notNull().check(sql`max_cost_wei >= 0`))
      .addColumn('tx_hash', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
    // The daily cap sums a wallet's spends of the last 24 hours.
    await sql`create index wallet_spends_recent on wallet_spends (did, created_at)`.execute(db);
  },
};

const deployments: Migration = {
  async up(db) {
    await db.schema
      .createTable('deployments')
      .addColumn('seq', 'int8', (c) => c.generatedAlwaysAsIdentity().unique())
      .addColumn('chain_id', 'int8', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('chain_profile', 'text', (c) => c.notNull())
      .addColumn('deployer_did', 'text', (c) => c.notNull())
      .addColumn('deployer_address', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('contract', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'submitted', 'confirmed', 'reverted')`))
      .addColumn('address', 'text')
      .addColumn('tx_hash', 'text')
      .addColumn('raw_tx', 'text')
      .addColumn('block_number', 'int8')
      .addColumn('gas_used', 'int8')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('deployments_pk', ['chain_id', 'idempotency_key'])
      .execute();
    // Known addresses give simulate and call an ABI to decode with.
    await sql`create index deployments_by_address on deployments (chain_id, lower(address)) where address is not null`.execute(db);
  },
};

export const migrations: Record<string, Migration> = {
  '0001_artifacts': artifacts,
  '0002_chains': chains,
  '0003_wallets': wallets,
  '0004_deployments': deployments,
};
