import type { ColumnType } from 'kysely';

/** A `date` column: written and compared as `YYYY-MM-DD` text, read back through `::text` (never a local-time Date). */
type Day = ColumnType<string, string, string>;

/** One published rate card version; never updated once written. */
export interface RateCardTable {
  version: number;
  /** The credit reference: USD per credit, in pico-USD. */
  usd_per_credit_pico: bigint;
  /** SHA-256 of the card's normalised content: a file edited after publication no longer matches. */
  content_sha256: string;
  /** The file it came from, for operators. */
  source: string;
  published_at: ColumnType<Date, Date | string, never>;
}

export interface RateCardPriceTable {
  version: number;
  model: string;
  input_pico_usd_per_mtok: bigint;
  output_pico_usd_per_mtok: bigint;
}

/** Per-actor overrides of the default daily cap (0 blocks the actor). */
export interface ActorCapTable {
  actor: string;
  limit_units: bigint;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

/**
 * The per-actor, per-UTC-day counter: `reserved_units` is the sum of the holders' leases on the day, raised by a
 * grant only while spent + reserved stays within the cap; a booking moves its cost from a lease to `spent_units`.
 */
export interface DailySpendTable {
  actor: string;
  day: Day;
  spent_units: bigint;
  reserved_units: bigint;
  calls: number;
}

export type LedgerKind = 'chat' | 'embedding';
/** `usage`: the upstream's reported usage; `reservation`: no usage arrived (client left mid-stream), the reservation was charged. */
export type LedgerBasis = 'usage' | 'reservation';

/** One debited call. `rate_table_v` and `cost_units` are written once, so a reprice never changes how a row reads. */
export interface LedgerTable {
  id: string;
  actor: string;
  day: Day;
  created_at: ColumnType<Date, Date | string, never>;
  slot: string;
  model: string;
  kind: LedgerKind;
  streamed: boolean;
  rate_table_v: number;
  input_tokens: number;
  output_tokens: number;
  cost_units: bigint;
  basis: LedgerBasis;
  intent_id: string | null;
  goal_id: string | null;
  kind_route: string | null;
}

/** A gateway instance that holds budget leases; it keeps `expires_at` ahead of the clock while it lives. */
export interface LeaseHolderTable {
  holder: string;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

/** The slice of an actor's day that one holder reserves from in memory; counted in `daily_spend.reserved_units`. */
export interface BudgetLeaseTable {
  holder: string;
  actor: string;
  day: Day;
  units: bigint;
}

export interface GatewaySchema {
  rate_cards: RateCardTable;
  rate_card_prices: RateCardPriceTable;
  actor_caps: ActorCapTable;
  daily_spend: DailySpendTable;
  ledger: LedgerTable;
  lease_holders: LeaseHolderTable;
  budget_leases: BudgetLeaseTable;
}
