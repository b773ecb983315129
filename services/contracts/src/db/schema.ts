import type { ColumnType, Generated, Selectable } from 'kysely';

/** The latest successful build's contracts of each project, one row per contract. */
export interface ArtifactTable {
  project_id: string;
  source: string;
  name: string;
  build_hash: string;
  solc_version: string;
  abi: ColumnType<unknown[], string, string>;
  bytecode: string;
  deployed_bytecode: string;
  created_at: Date;
}

/** Chain profiles callers registered; the built-in `local` and `primary-mainnet` come from settings, not rows. */
export interface ChainProfileTable {
  id: string;
  name: string;
  rpc_url: string;
  chain_id: ColumnType<bigint, bigint | number, bigint | number>;
  explorer: string | null;
  created_at: Date;
}

/** Small named values the engine keeps across restarts (the active chain). */
export interface EngineStateTable {
  key: string;
  value: string;
  updated_at: Date;
}

/** One EVM key per agent DID, sealed with AES-256-GCM under the wallet key from settings. */
export interface WalletTable {
  did: string;
  address: string;
  /** base64url of iv (12) ‖ tag (16) ‖ ciphertext (32), with the DID as additional data. */
  sealed_key: string;
  /** First 16 hex of SHA-256 over the wallet key: tells a wrong WALLET_KEY from a damaged row. */
  key_id: string;
  created_at: Date;
}

/** What a wallet committed to spend (value plus maximum fee), counted against its daily cap. */
export interface WalletSpendTable {
  id: string;
  did: string;
  chain_id: ColumnType<bigint, bigint | number, bigint | number>;
  purpose: string;
  max_cost_wei: ColumnType<string, string, string>;
  tx_hash: string | null;
  created_at: Date;
}

export type DeploymentStatus = 'pending' | 'submitted' | 'confirmed' | 'reverted';

/** A deployment keyed by (chain id, idempotency key): at most one transaction is ever signed per key. */
export interface DeploymentTable {
  /** Insertion order: the registry's page cursor (times can tie). */
  seq: Generated<bigint>;
  chain_id: ColumnType<bigint, bigint | number, bigint | number>;
  idempotency_key: string;
  chain_profile: string;
  deployer_did: string;
  deployer_address: string;
  /** SHA-256 of the canonical deploy request, to tell a replay from a key reused for something else. */
  request_hash: string;
  project_id: string;
  source: string;
  contract: string;
  status: DeploymentStatus;
  address: string | null;
  tx_hash: string | null;
  /** The signed transaction, kept until confirmed so a crash after signing re-sends the same bytes. */
  raw_tx: string | null;
  block_number: ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
  gas_used: ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
  created_at: Date;
  updated_at: Date;
}

export interface ContractsSchema {
  artifacts: ArtifactTable;
  chain_profiles: ChainProfileTable;
  engine_state: EngineStateTable;
  wallets: WalletTable;
  wallet_spends: WalletSpendTable;
  deployments: DeploymentTable;
}

export type ArtifactRow = Selectable<ArtifactTable>;
export type ChainProfileRow = Selectable<ChainProfileTable>;
export type WalletRow = Selectable<WalletTable>;
export type DeploymentRow = Selectable<DeploymentTable>;
