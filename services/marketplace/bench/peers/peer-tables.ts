import type { BenchMachine } from '@platform/testkit/bench-machine';
import type { LoopTally } from '@platform/testkit/load-loops';
import { p50, p99 } from '@platform/testkit/stats';
import type { ChargeRow } from './charges.ts';

/*
 * The paid bench's comparison with x402 v2: each way of paying at its best count of callers, what each charged when
 * the provider failed or the call was sent twice, and issue 36's targets (our hold rail at least 5× x402's calls
 * per second, our voucher rail at least 20×, nothing charged for a failed call).
 */

interface SweepRow {
  path: string;
  callers: number;
  serial: number[];
  run: LoopTally;
  cpuMs: string;
}

const targets = { holdOverX402: 5, voucherOverX402: 20 };
const rate = (run: LoopTally) => run.ok / run.seconds;

function bestOf(rows: SweepRow[], prefix: string): SweepRow | undefined {
  const runs = rows.filter((row) => row.path.startsWith(prefix));
  return runs.length === 0 ? undefined : runs.reduce((a, b) => (rate(b.run) > rate(a.run) ? b : a));
}

export function printPeerTables(rows: SweepRow[], charges: ChargeRow[], setup: { directSerial: number[]; machine: BenchMachine }): void {
  const x402 = bestOf(rows, 'x402');
  if (!x402) return;
  const hold = bestOf(rows, 'hold rail');
  const voucher = bestOf(rows, 'voucher rail');
  const x402Rate = rate(x402.run);
  console.log('\npaid calls beside x402 v2, each at its best count of callers; added latency one call in flight, over the provider called directly');
  console.log('| path | calls/s (callers) | vs x402 | added p50 ms | added p99 ms | CPU ms per call, by process |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const row of [hold, voucher, x402].filter((r): r is SweepRow => r !== undefined))
    console.log(
      `| ${row.path} | ${rate(row.run).toFixed(0)} (${row.callers}) | ${(rate(row.run) / x402Rate).toFixed(1)}× | ${(p50(row.serial) - p50(setup.directSerial)).toFixed(2)} | ` +
        `${(p99(row.serial) - p99(setup.directSerial)).toFixed(2)} | ${row.cpuMs} |`,
    );
  if (charges.length > 0) {
    console.log('\nwhat a caller was charged (read from its balance: at settlement for our rails, on chain for x402), one call at 0.001');
    console.log('| path | the call | answered | charged | calls charged |');
    console.log('|---|---|---|---:|---:|');
    for (const charge of charges)
      console.log(
        `| ${charge.path} | ${charge.scenario} | ${charge.answered} | ${(Number(charge.chargedMicros) / 1e6).toFixed(6)} | ${(Number(charge.chargedMicros) / Number(charge.priceMicros)).toFixed(0)} |`,
      );
  }
  const lines: Array<[string, string, boolean]> = [];
  if (hold)
    lines.push([
      `hold rail ≥ ${targets.holdOverX402}× x402's calls/s`,
      `${(rate(hold.run) / x402Rate).toFixed(1)}×`,
      rate(hold.run) >= targets.holdOverX402 * x402Rate,
    ]);
  if (voucher)
    lines.push([
      `voucher rail ≥ ${targets.voucherOverX402}× x402's calls/s`,
      `${(rate(voucher.run) / x402Rate).toFixed(1)}×`,
      rate(voucher.run) >= targets.voucherOverX402 * x402Rate,
    ]);
  const ours = charges.filter((charge) => !charge.path.startsWith('x402'));
  const failed = ours.filter((charge) => charge.scenario.startsWith('provider failed'));
  const twice = ours.filter((charge) => !charge.scenario.startsWith('provider failed'));
  if (failed.length > 0)
    lines.push([
      'nothing charged for a failed call (hold, voucher)',
      failed.map((c) => c.chargedMicros.toString()).join(' / '),
      failed.every((c) => c.chargedMicros === 0n),
    ]);
  if (twice.length > 0)
    lines.push([
      'a call sent twice with its key charged once (hold, voucher)',
      twice.map((c) => (c.chargedMicros / c.priceMicros).toString()).join(' / '),
      twice.every((c) => c.chargedMicros === c.priceMicros),
    ]);
  console.log(`\ntargets against x402 (issue 36)${setup.machine.reportable ? '' : ' (NOT REPORTABLE: the machine was busy)'}`);
  console.log('| target | measured | |');
  console.log('|---|---:|---|');
  for (const [target, measured, met] of lines) console.log(`| ${target} | ${measured} | ${met ? 'met' : '**not met**'} |`);
}
