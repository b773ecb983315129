import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { InvocationTable } from '../db/schema.ts';
import type { MarketplaceMetrics } from '../metrics.ts';
import type { CallLedger } from './call-ledger.ts';
import type { InvocationsRepository } from './invocations.repository.ts';
import type { Payouts } from './payouts.ts';
import { money } from './pricing.ts';
import type { SettlementGateway } from './settlement-gateway.ts';
import type { Tabs } from './tabs.ts';

const batch = 100;

/**
 * Finishes what an interrupted moment left open, with the same idempotency keys the first attempt used (so
 * nothing moves twice): holds of finished calls whose capture or release did not reach settlement; holds of
 * calls a crash interrupted mid-call (released: the caller pays nothing for a call it never got); tabs that
 * expired or whose close did not reach settlement; payouts whose answer was lost. Runs at start and then every
 * `MARKETPLACE_SWEEP_SECONDS`; one pass is `runOnce`, which tests call with the clock where they want it.
 */
export class Sweep {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #settlement: SettlementGateway;
  readonly #invocations: InvocationsRepository;
  readonly #tabs: Tabs;
  readonly #ledger: CallLedger;
  readonly #payouts: Payouts;
  readonly #metrics: MarketplaceMetrics;
  /** A call still pending this long after it started was interrupted (the longest provider timeout, and a margin). */
  readonly #interruptedAfterMs: number;

  constructor(options: {
    clock: Clock;
    logger: Logger;
    settlement: SettlementGateway;
    invocations: InvocationsRepository;
    tabs: Tabs;
    ledger: CallLedger;
    payouts: Payouts;
    metrics: MarketplaceMetrics;
    providerTimeoutMs: number;
  }) {
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#settlement = options.settlement;
    this.#invocations = options.invocations;
    this.#tabs = options.tabs;
    this.#ledger = options.ledger;
    this.#payouts = options.payouts;
    this.#metrics = options.metrics;
    this.#interruptedAfterMs = options.providerTimeoutMs + 60_000;
  }

  /** One pass; returns how many things it settled. A failure of one item is logged and left for the next pass. */
  async runOnce(): Promise<number> {
    let settled = 0;
    const before = new Date(this.#clock.now().getTime() - this.#interruptedAfterMs);
    let leftOpen = 0;
    for (const row of await this.#invocations.unsettled(before, batch)) {
      const done = await this.#attempt('hold', row.id, () => this.#settleHold(row));
      settled += done;
      if (done === 0 && row.hold_id !== null) leftOpen++;
    }
    // Read where it costs nothing more: the rows this pass reads anyway (at most a batch of them).
    this.#metrics.sweepLeftOpen(leftOpen);
    for (const tab of await this.#tabs.due(batch))
      settled += await this.#attempt('tab', tab.id, () => this.#tabs.closeById(tab.id, () => this.#ledger.flushed()));
    for (const payout of await this.#payouts.pending(batch)) settled += await this.#attempt('payout', payout.id, () => this.#payouts.pay(payout));
    return settled;
  }

  async #attempt(kind: string, id: string, work: () => Promise<unknown>): Promise<number> {
    try {
      await work();
      return 1;
    } catch (error) {
      this.#logger.warn({ err: error, kind, id }, 'sweep could not settle this yet');
      return 0;
    }
  }

  async #settleHold(row: InvocationTable): Promise<void> {
    if (row.status === 'pending') {
      // Interrupted mid-call: whatever the provider did, the caller got no answer and pays nothing. A noted hold is
      // released now; one not yet noted returns to the caller when it expires.
      const released = row.hold_id === null ? undefined : await this.#settlement.release(row.hold_id, `mkt:${row.id}:release`);
      await this.#ledger.finish(
        {
          ...row,
          status: 'failed',
          error: { reason: 'interrupted', message: 'the marketplace stopped while serving the call' },
          capture_seq: released === undefined ? null : BigInt(released.seq),
          finished_at: this.#clock.now(),
        },
        { success: false, providerFailure: false, latencyMs: 0 },
      );
      return;
    }
    const settled = await this.#settlement.settle(row.hold_id as string, row.cost_micros, `mkt:${row.id}`);
    if (settled.captured < row.cost_micros)
      this.#logger.warn({ invocation: row.id, cost: money(row.cost_micros) }, 'the hold had ended before its capture: the call was not paid');
    await this.#invocations.setSettled(row.id, settled.seq, settled.captured);
  }
}
