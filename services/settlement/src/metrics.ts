import { ServiceError } from '@platform/kit/errors';
import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import type { SequencerRole } from './ledger/sequencer.ts';

/** What the gauges read at scrape time (`readSettlementGauges`), all from one read shared by every gauge of a scrape. */
export interface SettlementReadings {
  /** Whole units: available plus held. */
  supply: number;
  /** Whole units the reserve holds (the vault's, or what the ledger recorded without a chain). */
  reserve: number;
  fullyReserved: boolean;
  /** Since the oldest batch whose anchor is not confirmed was closed (0: every batch anchored; NaN: no chain to anchor on). */
  anchorLagSeconds: number;
  /** Chain blocks that batch has waited (0: none waits; NaN: no chain, or not known on this instance). */
  anchorLagBlocks: number;
  /** Vault deposits the ledger has not taken in yet: short of their confirmations. */
  depositsAwaitingConfirmations: number;
  /** Withdrawals burned and not yet paid on chain (pending, broadcast or failed and retried). */
  withdrawalsPending: number;
}

export interface SettlementMetricSources {
  role: () => SequencerRole;
  readings: () => Promise<SettlementReadings>;
}

/** The outcomes a movement may have: success, and each refusal as its reason (a conflict's) or its code. */
const refusals = [
  'insufficient_funds',
  'balance_limit',
  'idempotency_key_reused',
  'hold_closed',
  'hold_expired',
  'exceeds_hold',
  'no_payout_address',
  'refused_by_database',
  'vault_frozen',
  'conflict',
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'unavailable',
  'internal',
] as const;
export type Refusal = (typeof refusals)[number] | 'other';
const refusalSet: ReadonlySet<string> = new Set(refusals);
export const holdSuccesses = ['placed', 'captured', 'released', 'expired'] as const;
export type HoldOutcome = (typeof holdSuccesses)[number] | Refusal;

/** A refusal's label: a conflict by its `details.reason`, any other ServiceError by its code, anything else `other`. */
export function refusalOf(error: unknown): Refusal {
  if (!(error instanceof ServiceError)) return 'other';
  const reason = error.code === 'conflict' && typeof error.details?.reason === 'string' ? error.details.reason : error.code;
  return refusalSet.has(reason) ? (reason as Refusal) : error.code === 'conflict' ? 'conflict' : 'other';
}

/** The sequencer's counting handles; label children are made once and kept. */
export interface SettlementMetrics {
  pay(outcome: 'ok' | Refusal): void;
  hold(outcome: HoldOutcome, count?: number): void;
  /** One group written: how many commands it carried, and its write from sending to commit, in seconds. */
  groupCommitted(commands: number, seconds: number): void;
}

const groupSizeBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/**
 * Registers every settlement metric (so each is in `/metrics` from the start). `sources` feeds the gauges read at
 * scrape time; without it (a caller that only lists the names) they read NaN.
 */
export function settlementMetrics(metrics: ServiceMetrics, sources?: SettlementMetricSources): SettlementMetrics {
  const pays = metrics.counter<'outcome'>({
    name: 'settlement_pays_total',
    help: 'Pays the sequencer answered, by outcome: ok, or the refusal (insufficient_funds, idempotency_key_reused, unavailable, ...)',
    labelNames: ['outcome'],
  });
  const holds = metrics.counter<'outcome'>({
    name: 'settlement_holds_total',
    help: 'Holds placed, captured, released and expired, and hold commands refused (by reason: hold_closed, insufficient_funds, ...)',
    labelNames: ['outcome'],
  });
  const groupSize = metrics.histogram({
    name: 'settlement_group_size',
    help: 'Commands per group commit (one transaction)',
    buckets: groupSizeBuckets,
  });
  const groupCommit = metrics.histogram({
    name: 'settlement_group_commit_seconds',
    help: 'A group commit from sending its statement to the commit, in seconds',
  });
  registerGauges(metrics, sources);
  // The outcomes every dashboard reads exist at 0 from the start, so a rate over them exists at once.
  for (const outcome of ['ok', 'unavailable']) pays.labels(outcome).inc(0);
  for (const outcome of [...holdSuccesses, 'unavailable']) holds.labels(outcome).inc(0);
  return {
    pay: (outcome) => pays.labels(outcome).inc(),
    hold: (outcome, count = 1) => holds.labels(outcome).inc(count),
    groupCommitted: (commands, seconds) => {
      groupSize.observe(commands);
      groupCommit.observe(seconds);
    },
  };
}

function registerGauges(metrics: ServiceMetrics, sources: SettlementMetricSources | undefined): void {
  // One read per scrape, whichever gauge asks first: every gauge of a scrape collects at once.
  let reading: Promise<SettlementReadings | undefined> | undefined;
  const readings = () => {
    reading ??= (sources?.readings() ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const read = (name: string, help: string, pick: (readings: SettlementReadings) => number) =>
    metrics.gauge({
      name,
      help,
      async collect() {
        const current = await readings();
        this.set(current === undefined ? Number.NaN : pick(current));
      },
    });
  read('settlement_supply', 'Money in the ledger, in whole units: every available and held balance', (r) => r.supply);
  read(
    'settlement_vault_reserve',
    'The reserve backing the supply, in whole units: the vault’s (or, without a chain, what the ledger recorded)',
    (r) => r.reserve,
  );
  read('settlement_fully_reserved', '1 while the reserve covers the supply exactly (the reserve check, as /v1/supply says), else 0', (r) =>
    r.fullyReserved ? 1 : 0,
  );
  read(
    'settlement_anchor_lag_seconds',
    'Seconds since the oldest batch not yet anchored on chain was closed; 0 when all are, NaN without a chain',
    (r) => r.anchorLagSeconds,
  );
  read(
    'settlement_anchor_lag_blocks',
    'Chain blocks the oldest batch not yet anchored has waited; 0 when none waits, NaN without a chain or on a standby',
    (r) => r.anchorLagBlocks,
  );
  read(
    'settlement_deposits_awaiting_confirmations',
    'Vault deposits on chain the ledger has not credited yet: short of their confirmations',
    (r) => r.depositsAwaitingConfirmations,
  );
  read('settlement_withdrawals_pending', 'Withdrawals burned in the ledger and not yet paid by the vault', (r) => r.withdrawalsPending);
  metrics.gauge<'role'>({
    name: 'settlement_role',
    help: 'This instance’s role: role="sequencer" is 1 on the one writer, role="standby" 1 on an instance waiting for the lock (both 0 once stopped)',
    labelNames: ['role'],
    collect() {
      const role = sources?.role() ?? 'stopped';
      this.set({ role: 'sequencer' }, role === 'sequencer' ? 1 : 0);
      this.set({ role: 'standby' }, role === 'standby' ? 1 : 0);
    },
  });
}
