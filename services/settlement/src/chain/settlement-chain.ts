import { formatAmount } from '@platform/kit/money';
import { type Kysely, sql } from 'kysely';
import { accountHash } from '../balances/balance-tree.ts';
import type { SettlementSchema } from '../db/schema.ts';

/** Where the ledger's reserve lives: the chain id and the vault (which also stores the anchors) and its token. */
export interface ChainView {
  readonly chainId: number;
  readonly vaultAddress: string | null;
  readonly tokenAddress: string | null;
}

/** The ledger's side of the reserve equation, read in one statement so the numbers belong together. */
export interface LedgerTotals {
  available: bigint;
  held: bigint;
  /** Every withdrawal ever burned. */
  withdrawn: bigint;
  /** Vault deposits credited to accounts. */
  chainDeposits: bigint;
  /** Development faucet credits that never touched a vault (recording mode only). */
  faucetDeposits: bigint;
  /** Vault deposits waiting for their DID to be named. */
  unclaimed: bigint;
}

export async function readLedgerTotals(db: Kysely<SettlementSchema>): Promise<LedgerTotals> {
  const { rows } = await sql<Record<keyof LedgerTotals, string>>`
    select
      (select coalesce(sum(balance), 0) from accounts) as "available",
      (select coalesce(sum(held), 0) from accounts) as "held",
      (select coalesce(sum(amount), 0) from withdrawals) as "withdrawn",
      (select coalesce(sum(amount), 0) from deposits where source = 'chain') as "chainDeposits",
      (select coalesce(sum(amount), 0) from deposits where source = 'faucet') as "faucetDeposits",
      (select coalesce(sum(amount), 0) from unclaimed_deposits where credited_seq is null) as "unclaimed"`.execute(db);
  const row = rows[0] as Record<keyof LedgerTotals, string>;
  return {
    available: BigInt(row.available),
    held: BigInt(row.held),
    withdrawn: BigInt(row.withdrawn),
    chainDeposits: BigInt(row.chainDeposits),
    faucetDeposits: BigInt(row.faucetDeposits),
    unclaimed: BigInt(row.unclaimed),
  };
}

/** `/v1/supply`: the ledger's supply beside the reserve that backs it. */
export interface SupplyView {
  supply: string;
  available: string;
  held: string;
  reserve: string;
  fully_reserved: boolean;
  chain_id: number;
  vault_address: string | null;
  [more: string]: unknown;
}

/** What the metrics read of the chain side at scrape time (see `metrics.ts`). */
export interface ChainGauges {
  /** Chain blocks the oldest batch not yet anchored has waited; 0 when none waits, NaN when not known here. */
  anchorLagBlocks: number;
  /** Vault deposits on chain the ledger has not taken in yet. */
  depositsAwaitingConfirmations: number;
}

/**
 * The one door to the chain. `recordingChain` is the ledger without a node (development and the ledger's own tests):
 * anchors and payouts stay recorded in the database. The live chain (`live-chain.ts`) watches the vault for deposits,
 * anchors every batch, pays withdrawals and checks the reserve.
 */
export interface SettlementChain extends ChainView {
  /** True when a node and a vault are wired: deposits come from the vault only, and the faucet deposits on chain. */
  readonly live: boolean;
  supply(): Promise<SupplyView>;
  /** What `/v1/info` adds about the chain. */
  info(): Record<string, unknown>;
  /** What `/healthz` adds; `alarm` set when the reserve check failed or the vault froze. */
  health(): { alarm?: string; [more: string]: unknown } | undefined;
  /** Remembers keccak256(did) → did, so the watcher can credit a vault deposit that names the DID by hash. */
  registerClaim(did: string): Promise<void>;
  /** Why movements are refused now (a frozen vault ends the ledger), or undefined. */
  halted(): string | undefined;
  gauges(): Promise<ChainGauges>;
  /** The development faucet, where the chain does it itself (a vault deposit); absent: the ledger records one. */
  fund?(did: string, micros: bigint): Promise<unknown>;
}

/** Supply and reserve as the ledger alone knows them: every credited deposit less every withdrawal. */
export function recordedSupply(totals: LedgerTotals, view: ChainView): SupplyView {
  const supply = totals.available + totals.held;
  const reserve = totals.chainDeposits + totals.faucetDeposits - totals.withdrawn;
  return {
    supply: formatAmount(supply),
    available: formatAmount(totals.available),
    held: formatAmount(totals.held),
    reserve: formatAmount(reserve),
    fully_reserved: supply === reserve,
    chain_id: view.chainId,
    vault_address: view.vaultAddress,
  };
}

/**
 * The ledger without a chain: the reserve is every credited deposit minus every withdrawal, which is what the
 * vault would hold once the recorded payouts are sent. The faucet records itself as a deposit, so it counts too.
 */
export function recordingChain(view: ChainView, db: Kysely<SettlementSchema>): SettlementChain {
  return {
    ...view,
    live: false,
    supply: async () => recordedSupply(await readLedgerTotals(db), view),
    info: () => ({ mode: 'recording' }),
    health: () => undefined,
    // Kept even without a node, so deposits made before a chain is wired are credited once it is.
    registerClaim: (did) => registerDepositClaim(db, did),
    halted: () => undefined,
    // Nothing is anchored or deposited on a chain: no blocks to count, no deposit to wait for.
    gauges: async () => ({ anchorLagBlocks: Number.NaN, depositsAwaitingConfirmations: 0 }),
  };
}

/** Records keccak256(did) → did once; later calls change nothing. */
export async function registerDepositClaim(db: Kysely<SettlementSchema>, did: string): Promise<void> {
  await db
    .insertInto('deposit_claims')
    .values({ account_hash: accountHash(did), did, created_at: new Date() })
    .onConflict((conflict) => conflict.column('account_hash').doNothing())
    .execute();
}
