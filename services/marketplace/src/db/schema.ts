import type { NonceSchema } from '@platform/kit/auth/nonce-store';
import type { Generated } from 'kysely';
import type { Manifest } from '../listings/manifest-types.ts';

/** A developer: a wallet that signed in (EIP-4361) or signed a request. */
export interface DeveloperTable {
  /** EIP-55 checksummed. */
  address: string;
  created_at: Date;
  last_seen_at: Date;
}

/** Single-use Sign-In with Ethereum nonces. */
export interface DeveloperNonceTable {
  nonce: string;
  created_at: Date;
  expires_at: Date;
}

/** Nonces of `Authorization: Wallet` requests, kept until their replay window has passed. */
export interface WalletRequestNonceTable {
  address: string;
  nonce: string;
  expires_at: Date;
}

export type ListingStatus = 'draft' | 'active' | 'paused' | 'delisted';
export type RegistryStatus = 'none' | 'pending' | 'registered' | 'failed';

export interface ListingTable {
  id: string;
  slug: string;
  /** The developer's address (EIP-55): the only one who may change it. */
  owner_address: string;
  /** Where earnings are paid (a platform DID at settlement); null until the owner names one. */
  payout_did: string | null;
  display_name: string;
  summary: string;
  kind: string;
  status: ListingStatus;
  manifest: Manifest;
  /** keccak256 of the manifest's canonical JSON (RFC 8785), 0x hex: what the registry records. */
  manifest_hash: string;
  /** Bumped whenever pricing changes; quotes name it. */
  pricing_version: number;
  /** Name, summary, tags, operation names and descriptions: the text the catalog searches (a tsvector column follows it). */
  search_document: string;
  registry_status: RegistryStatus;
  registry_tx_hash: string | null;
  registry_block: bigint | null;
  /** The manifest hash the chain holds (it may trail `manifest_hash` until the next publish). */
  registry_manifest_hash: string | null;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  /** Hosted listings: the running deployment its calls go to (null for a listing that runs its own server). */
  hosted_deployment_id?: string | null;
}

/** Measured from real invocations (never from the manifest): what quality and uptime are computed from. */
export interface ListingStatsTable {
  listing_id: string;
  calls: bigint;
  successes: bigint;
  /** Failures the provider caused (errors, timeouts, bad answers); a caller's mistake is not counted. */
  failures: bigint;
  latency_ms_total: bigint;
  last_call_at: Date | null;
  /** Stored generated columns (discovery/ranking-migration.ts): quality.ts's formula, kept with the counts it is computed from. */
  readonly reliability?: number;
  readonly quality?: number;
  readonly uptime_bps?: number | null;
}

export type InvocationStatus = 'pending' | 'succeeded' | 'failed';
export type PaymentRail = 'hold' | 'voucher' | 'stream';

export interface InvocationTable {
  id: string;
  listing_id: string;
  operation: string;
  caller_did: string;
  /** '' for none; unique per caller otherwise. */
  idempotency_key: string;
  /** SHA-256 of what the caller asked (operation, args, quote): the same key with another request is refused. */
  request_hash: string;
  rail: PaymentRail;
  quote_id: string | null;
  status: InvocationStatus;
  cap_micros: bigint;
  cost_micros: bigint;
  units: bigint;
  /** The settlement hold (hold rail) or channel (voucher rail) that paid it. */
  hold_id: string | null;
  channel_id: string | null;
  capture_seq: bigint | null;
  /** keccak256 of the canonical request and response, 0x hex, as the receipt binds them. */
  request_digest: string;
  response_digest: string | null;
  /** What the caller got, kept so a replay of the same key returns it. */
  response: unknown;
  error: unknown;
  latency_ms: number | null;
  started_at: Date;
  finished_at: Date | null;
  /** The signed EIP-712 receipt, made on first read and kept. */
  receipt: unknown;
  /** The voucher sequence that paid it (voucher rail). */
  tab_sequence: bigint | null;
}

export interface QuoteTable {
  id: string;
  listing_id: string;
  operation: string;
  caller_did: string;
  unit_price_micros: bigint;
  estimated_units: bigint;
  max_total_micros: bigint;
  pricing_version: number;
  expires_at: Date;
  digest: string;
  signature: string;
  created_at: Date;
}

/**
 * A tab: funds locked once (one settlement hold for `deposit`) and spent by signed cumulative vouchers. A channel
 * pays many calls of a listing; a stream session bills one operation as it goes. Closing captures `spent` and
 * returns the rest.
 */
export interface TabTable {
  id: string;
  kind: 'channel' | 'stream';
  caller_did: string;
  /** The caller's ed25519 key (hex), from the intent that opened the tab: vouchers are checked against it. */
  caller_public_key: string;
  listing_id: string;
  /** Streams: the operation billed and its price. */
  operation: string | null;
  unit_price_micros: bigint | null;
  hold_id: string;
  deposit_micros: bigint;
  /** What the marketplace has co-signed as spent. */
  spent_micros: bigint;
  /** The largest cumulative amount the caller has signed. */
  authorized_micros: bigint;
  /** The last voucher's sequence (0 before the first). */
  sequence: bigint;
  last_voucher: unknown;
  /** `closing`: refused new calls, its capture not yet confirmed by settlement (the sweep finishes it). */
  status: 'open' | 'closing' | 'closed';
  expires_at: Date;
  created_at: Date;
  closed_at: Date | null;
  capture_seq: bigint | null;
  idempotency_key: string;
}

export interface PayoutTable {
  id: string;
  listing_id: string;
  owner_address: string;
  to_did: string;
  amount_micros: bigint;
  settlement_seq: bigint | null;
  status: 'pending' | 'paid' | 'failed';
  error: string | null;
  created_at: Date;
}

/** Answers of write routes by `Idempotency-Key`, per scope (the caller or developer, and the route). */
export interface IdempotencyTable {
  scope: string;
  key: string;
  request_hash: string;
  status: 'pending' | 'done';
  response: unknown;
  created_at: Date;
}

/** A module of an uploaded Worker: an ES module's text, or WebAssembly as base64. */
export interface HostedModule {
  name: string;
  type: 'esm' | 'wasm';
  content: string;
}

/** A binding as stored: plain text as it is, a secret sealed (AES-256-GCM, hosting/secrets.ts). */
export type StoredBinding = { type: 'plain_text'; name: string; text: string } | { type: 'secret_text'; name: string; sealed: string };

/** An uploaded Worker, content-addressed within its listing. */
export interface HostedArtifactTable {
  listing_id: string;
  /** SHA-256 hex of the upload (secrets by their keyed digest, hosting/artifact-upload.ts). */
  id: string;
  main_module: string;
  compatibility_date: string;
  egress_allowlist: string[];
  bindings: StoredBinding[];
  modules: HostedModule[];
  size_bytes: number;
  created_at: Date;
}

export type DeploymentStatus = 'build' | 'deploy' | 'running' | 'failed' | 'stopped';
export type DeploymentPhase = 'build' | 'deploy' | 'running';

export interface HostedDeploymentTable {
  id: string;
  listing_id: string;
  artifact_id: string;
  runner: string;
  status: DeploymentStatus;
  failed_phase: DeploymentPhase | null;
  failure: string | null;
  bindings: StoredBinding[];
  /** The built module (the wrapper and the developer's modules in one ES module); null until the build finished. */
  bundle: string | null;
  created_at: Date;
  build_started_at: Date | null;
  build_finished_at: Date | null;
  deploy_started_at: Date | null;
  deploy_finished_at: Date | null;
  running_at: Date | null;
  stopped_at: Date | null;
  /** Set on a deployment made by rolling back: the earlier deployment whose bundle it runs again. */
  rollback_of: string | null;
}

export interface HostedLogTable {
  id: Generated<bigint>;
  listing_id: string;
  deployment_id: string;
  invocation_id: string | null;
  level: string;
  message: string;
  at: Date;
}

export interface MarketplaceSchema extends NonceSchema {
  hosted_artifacts: HostedArtifactTable;
  hosted_deployments: HostedDeploymentTable;
  hosted_logs: HostedLogTable;
  idempotency: IdempotencyTable;
  developers: DeveloperTable;
  developer_nonces: DeveloperNonceTable;
  wallet_request_nonces: WalletRequestNonceTable;
  listings: ListingTable;
  listing_stats: ListingStatsTable;
  invocations: InvocationTable;
  quotes: QuoteTable;
  tabs: TabTable;
  payouts: PayoutTable;
}
