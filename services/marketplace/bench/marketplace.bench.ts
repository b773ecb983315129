/*
 * The marketplace's benchmark, peers side by side in the same run:
 *  - paid calls end to end (callers → marketplace → settlement, and a provider that answers at once), per call
 *    with a hold and per call with a voucher, against the same client calling the provider directly: calls per
 *    second with 32 callers, and the latency the marketplace adds with one call in flight;
 *  - discovery over 10,000 listings (bench/discovery.ts) beside a bare ts_rank query and an ILIKE scan.
 * Settlement and the marketplace run as processes of their own, each on its own PostgreSQL database.
 * Usage: npm run bench -w services/marketplace
 *   BENCH_DATABASE_URL  admin URL (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_SECONDS       length of each throughput run (default 8)
 *   BENCH_CALLERS       callers in flight (default 32)
 *   BENCH_PARTS         paid,discovery (default both)
 *   BENCH_PROFILE       a folder: settlement and the marketplace write CPU profiles there (one folder each) when they stop
 */
import os from 'node:os';
import { benchPreamble } from '@platform/testkit/bench-machine';
import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { closedLoopEach, type LoopTally, type Outcome } from '@platform/testkit/load-loops';
import { p50, p99 } from '@platform/testkit/stats';
import { createTempDatabase } from '@platform/testkit/temp-database';
import { benchDiscovery } from './discovery.ts';
import { directCall, holdCall, openChannel, voucherCall } from './paid-calls.ts';
import { startPaidWorld } from './paid-world.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const callerCount = Number(process.env.BENCH_CALLERS ?? 32);
const parts = (process.env.BENCH_PARTS ?? 'paid,discovery').split(',');
const serialCalls = 400;
const targets = { holdPerSecond: 1_000, voucherPerSecond: 2_000, voucherAddedP50Ms: 2, discoveryP99Ms: 20 };

const _cpus = os.cpus();
await benchPreamble('marketplace');

const fmt = (value: number, digits = 2) => value.toFixed(digits);
const rate = (run: LoopTally) => run.ok / run.seconds;
const errors = (run: LoopTally) => [...run.errors].map(([label, count]) => `${label}×${count}`).join(' ') || '0';

if (parts.includes('paid')) {
  const databases = { settlement: await createTempDatabase(adminUrl), marketplace: await createTempDatabase(adminUrl) };
  const world = await startPaidWorld(databases, callerCount);
  try {
    const serialOf = async (send: () => Promise<{ ok: boolean }>) => {
      for (let i = 0; i < 50; i++) await send();
      const latencies: number[] = [];
      for (let i = 0; i < serialCalls; i++) {
        const started = performance.now();
        const outcome = await send();
        if (!outcome.ok) throw new Error('a serial bench call failed');
        latencies.push(performance.now() - started);
      }
      return latencies;
    };
    const channels = await Promise.all(world.callers.map((caller) => openChannel(world, caller, '50000')));
    const voucherSends = world.callers.map((caller, index) => voucherCall(world, caller, channels[index] as string));
    const holdSends = world.callers.map((caller) => holdCall(world, caller));
    const directSends = world.callers.map(() => directCall(world));
    const serial = {
      direct: await serialOf(directSends[0] as () => Promise<{ ok: boolean }>),
      hold: await serialOf(holdSends[0] as () => Promise<{ ok: boolean }>),
      voucher: await serialOf(voucherSends[0] as () => Promise<{ ok: boolean }>),
    };
    const pids = [world.marketplace.process.pid, world.settlement.process.pid, process.pid];
    const cores = new Map<LoopTally, string>();
    const measured = async (sends: Array<() => Promise<Outcome>>) => {
      const from = cpuSnapshot(pids);
      const run = await closedLoopEach(sends, seconds * 1000);
      const used = cpuBetween(from, cpuSnapshot(pids));
      cores.set(run, [used.named(pids[0]), used.named(pids[1]), used.postgres, used.named(pids[2])].map((value) => fmt(value, 2)).join(' / '));
      return run;
    };
    const runs = { direct: await measured(directSends), hold: await measured(holdSends), voucher: await measured(voucherSends) };
    const directP50 = p50(serial.direct);
    console.log(`\npaid calls, PostgreSQL, ${callerCount} callers in flight for ${seconds} s; added latency with one call in flight (${serialCalls} calls)`);
    console.log(
      '| path | calls/s | vs direct | p50 ms | p99 ms | errors | added p50 ms (serial) | added p99 ms (serial) | cores: marketplace / settlement / postgres / callers+provider | target |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|---|');
    for (const [path, run, latencies, target] of [
      ['provider directly (peer)', runs.direct, serial.direct, ''],
      [
        'hold rail (hold, serve, capture)',
        runs.hold,
        serial.hold,
        `≥ ${targets.holdPerSecond}/s: ${rate(runs.hold) >= targets.holdPerSecond ? 'met' : 'NOT met'}`,
      ],
      [
        'voucher rail (channel)',
        runs.voucher,
        serial.voucher,
        `≥ ${targets.voucherPerSecond}/s: ${rate(runs.voucher) >= targets.voucherPerSecond ? 'met' : 'NOT met'}; added p50 < ${targets.voucherAddedP50Ms} ms: ${p50(serial.voucher) - directP50 < targets.voucherAddedP50Ms ? 'met' : 'NOT met'}`,
      ],
    ] as const)
      console.log(
        `| ${path} | ${fmt(rate(run), 0)} | ${fmt(rate(run) / rate(runs.direct))}× | ${fmt(p50(run.latencies))} | ${fmt(p99(run.latencies))} | ${errors(run)} | ${fmt(p50(latencies) - directP50)} | ${fmt(p99(latencies) - p99(serial.direct))} | ${cores.get(run)} | ${target} |`,
      );
  } finally {
    await world.stop();
    await databases.settlement.drop();
    await databases.marketplace.drop();
  }
}

if (parts.includes('discovery')) {
  for (const engine of ['postgres', 'pglite'] as const) {
    const rows = await benchDiscovery({ engine, adminUrl, ...(engine === 'pglite' ? { calls: 300 } : {}) });
    console.log(`\ndiscovery over ${rows[0]?.listings ?? 0} listings on ${engine}, one call in flight`);
    console.log('| case | p50 ms | p99 ms | p50 vs bare ts_rank | target p99 < 20 ms |');
    console.log('|---|---:|---:|---:|---|');
    for (const row of rows)
      console.log(
        `| ${row.case} | ${fmt(row.p50Ms)} | ${fmt(row.p99Ms)} | ${row.p50VsBareRank === null ? '–' : `${fmt(row.p50VsBareRank)}×`} | ${row.meetsTarget === null ? '' : row.meetsTarget ? 'met' : 'NOT met'} |`,
      );
  }
}
