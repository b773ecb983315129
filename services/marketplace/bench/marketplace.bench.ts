/*
 * The marketplace's benchmark, peers side by side in the same run:
 *  - paid calls end to end (callers → marketplace → settlement, and a provider that answers at once), per call
 *    with a hold and per call with a voucher, against the same client calling the provider directly: calls per
 *    second at each count of callers in flight (the best is the rail's capacity), and the latency the marketplace
 *    adds with one call in flight;
 *  - hosted mode (bench/hosted.ts): upload-to-running, a paid call to a hosted Worker against the same Worker code as
 *    an external provider on loopback, and running deployments per workerd against its memory;
 *  - discovery over 10,000 listings (bench/discovery.ts) beside a bare ts_rank query and an ILIKE scan.
 * Settlement and the marketplace run as processes of their own, each on its own PostgreSQL database.
 * Usage: npm run bench -w services/marketplace
 *   BENCH_DATABASE_URL  admin URL (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_SECONDS       length of each throughput run (default 8)
 *   BENCH_CALLERS       counts of callers in flight, one throughput run each (default 32,128,256)
 *   BENCH_PARTS         paid,hosted,discovery (default all three)
 *   BENCH_DEPLOYMENTS   running deployments the hosted part loads (default 100)
 *   BENCH_RAILS         hold,voucher,x402 (default all three; the direct peer always runs), e.g. one rail for a CPU profile;
 *                       x402 is x402 v2 on a local anvil (bench/peers/x402.ts), and the charges table needs all three
 *   BENCH_PROFILE       a folder: settlement and the marketplace write CPU profiles there (one folder each) when they stop
 */
import { benchPreamble } from '@platform/testkit/bench-machine';
import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { closedLoopEach, type LoopTally, type Outcome } from '@platform/testkit/load-loops';
import { p50, p99 } from '@platform/testkit/stats';
import { createTempDatabase } from '@platform/testkit/temp-database';
import { benchDiscovery } from './discovery.ts';
import { benchHosted } from './hosted.ts';
import { directCall, holdCall, openChannel, voucherCall } from './paid-calls.ts';
import { startPaidWorld } from './paid-world.ts';
import { type ChargeRow, ourCharges, x402Charges } from './peers/charges.ts';
import { printPeerTables } from './peers/peer-tables.ts';
import { startX402World, x402Call } from './peers/x402.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const callerCounts = (process.env.BENCH_CALLERS ?? '32,128,256').split(',').map(Number);
const parts = (process.env.BENCH_PARTS ?? 'paid,hosted,discovery').split(',');
const deploymentCount = Number(process.env.BENCH_DEPLOYMENTS ?? 100);
const rails = (process.env.BENCH_RAILS ?? 'hold,voucher,x402').split(',');
const serialCalls = 400;
const targets = {
  holdPerSecond: 1_000,
  voucherPerSecond: 2_000,
  voucherAddedP50Ms: 2,
  discoveryP99Ms: 20,
  uploadToRunningP50Ms: 1_000,
  hostedAddedP50Ms: 2,
  deployments: 100,
  deploymentsBytes: 2 * 1024 ** 3,
};

const machine = await benchPreamble('marketplace');

/** A figure to print; '–' where there is none (no call completed: a percentile of nothing). */
const fmt = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const rate = (run: LoopTally) => run.ok / run.seconds;
const errors = (run: LoopTally) => [...run.errors].map(([label, count]) => `${label}×${count}`).join(' ') || '0';

/** Latencies of calls sent one at a time, after 50 to warm up. */
async function serialOf(send: () => Promise<Outcome>) {
  for (let i = 0; i < 50; i++) await send();
  const latencies: number[] = [];
  for (let i = 0; i < serialCalls; i++) {
    const started = performance.now();
    const outcome = await send();
    if (!outcome.ok) throw new Error(`a serial bench call failed: ${outcome.label}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

if (parts.includes('paid')) {
  const databases = { settlement: await createTempDatabase(adminUrl), marketplace: await createTempDatabase(adminUrl) };
  // Two callers more than the largest run: the charges table's, whose balances nothing else moves.
  const world = await startPaidWorld(databases, Math.max(...callerCounts) + 2);
  const charges: ChargeRow[] = [];
  try {
    const pids = [world.marketplace.process.pid, world.settlement.process.pid, process.pid];
    const ourDatabases = [databases.settlement.name, databases.marketplace.name];
    // CPU per call in each process (and in the backends of the bench's own databases): comparable between runs
    // on a shared machine, where calls per second are not.
    type Used = ReturnType<typeof cpuBetween>;
    const measuredIn =
      (processes: ReadonlyArray<number | undefined>, parts: (used: Used) => number[]) => async (sends: ReadonlyArray<() => Promise<Outcome>>) => {
        const from = cpuSnapshot(processes);
        const run = await closedLoopEach(sends, seconds * 1000);
        const used = cpuBetween(from, cpuSnapshot(processes));
        // No call completed (x402 at 256 callers in a 4 s run): no CPU a call, printed as '–' (not a division by almost nothing).
        const perCall = (cores: number) => (rate(run) > 0 ? (cores * 1000) / rate(run) : Number.NaN);
        return {
          run,
          cpuMs: parts(used)
            .map((cores) => fmt(perCall(cores), 3))
            .join(' / '),
          machine: fmt(used.machine),
        };
      };
    const measured = measuredIn(pids, (used) => [used.named(pids[0]), used.named(pids[1]), used.postgresOf(ourDatabases), used.named(pids[2])]);
    type Row = { path: string; callers: number; serial: number[]; run: LoopTally; cpuMs: string; machine: string; target: string };
    /** A run per count of callers, each with the first `count` lanes; `judge` gets the best (the rail's capacity). */
    const sweep = async (
      path: string,
      serial: number[],
      sends: ReadonlyArray<() => Promise<Outcome>>,
      judge: (best: LoopTally) => string,
      measure = measured,
    ) => {
      const runs: Row[] = [];
      for (const count of callerCounts) runs.push({ path, callers: count, serial, ...(await measure(sends.slice(0, count))), target: '' });
      const best = runs.reduce((a, b) => (rate(b.run) > rate(a.run) ? b : a));
      best.target = judge(best.run);
      return runs;
    };
    const directSerial = await serialOf(directCall(world));
    const directP50 = p50(directSerial);
    const directs = await sweep(
      'provider directly (peer)',
      directSerial,
      world.callers.map(() => directCall(world)),
      () => '',
    );
    const peerRate = new Map(directs.map((row) => [row.callers, rate(row.run)]));
    const rows: Row[] = [...directs];
    if (rails.includes('hold')) {
      const sends = world.callers.map((caller) => holdCall(world, caller));
      // Each caller's first call asks for the terms (a 402); every later one pays in one request.
      await Promise.all(sends.map((send) => send()));
      const serial = await serialOf(sends[0] as () => Promise<Outcome>);
      const judge = (best: LoopTally) => `≥ ${targets.holdPerSecond}/s: ${rate(best) >= targets.holdPerSecond ? 'met' : 'NOT met'}`;
      rows.push(...(await sweep('hold rail (hold, serve, capture)', serial, sends, judge)));
    }
    if (rails.includes('voucher')) {
      const channels = await Promise.all(world.callers.map((caller) => openChannel(world, caller, '50000')));
      // One lane per caller, its calls in order on its own channel; the serial run is the first caller's first calls.
      const sends = channels.map((channel) => voucherCall(channel));
      const serial = await serialOf(sends[0] as () => Promise<Outcome>);
      const addedMet = p50(serial) - directP50 < targets.voucherAddedP50Ms;
      const judge = (best: LoopTally) =>
        `≥ ${targets.voucherPerSecond}/s: ${rate(best) >= targets.voucherPerSecond ? 'met' : 'NOT met'}; added p50 < ${targets.voucherAddedP50Ms} ms: ${addedMet ? 'met' : 'NOT met'}`;
      rows.push(...(await sweep('voucher rail (channel)', serial, sends, judge)));
    }
    if (rails.includes('x402')) {
      const x402 = await startX402World(world.providerUrl, Math.max(...callerCounts) + 1);
      try {
        const payers = x402.payers.slice(0, -1);
        const sends = payers.map((payer) => x402Call(x402, payer));
        await Promise.all(sends.map((send) => send()));
        const serial = await serialOf(sends[0] as () => Promise<Outcome>);
        const { seller, facilitator, chain } = x402;
        const x402Pids = [seller.info.pid, facilitator.info.pid, chain.pid, process.pid];
        const measure = measuredIn(x402Pids, (used) => x402Pids.map((pid) => used.named(pid)));
        rows.push(...(await sweep('x402 v2 exact (CPU: seller / facilitator / anvil / callers+provider)', serial, sends, () => '', measure)));
        if (rails.includes('hold') && rails.includes('voucher')) charges.push(...(await x402Charges(x402, x402.payers.at(-1) as (typeof x402.payers)[number])));
      } finally {
        await x402.stop();
      }
    }
    if (rails.includes('hold') && rails.includes('voucher') && rails.includes('x402'))
      charges.unshift(
        ...(await ourCharges(world, world.callers.at(-2) as (typeof world.callers)[number], world.callers.at(-1) as (typeof world.callers)[number])),
      );
    console.log(
      `\npaid calls, PostgreSQL, ${seconds} s per run; added latency with one call in flight (${serialCalls} calls); a target is judged on the rail's best run`,
    );
    console.log(
      '| path | callers in flight | calls/s | vs direct | p50 ms | p99 ms | errors | added p50 ms (serial) | added p99 ms (serial) | CPU ms per call: marketplace / settlement / postgres / callers+provider | machine cores busy | target |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|');
    for (const row of rows)
      console.log(
        `| ${row.path} | ${row.callers} | ${fmt(rate(row.run), 0)} | ${fmt(rate(row.run) / (peerRate.get(row.callers) ?? Number.NaN))}× | ${fmt(p50(row.run.latencies))} | ${fmt(p99(row.run.latencies))} | ${errors(row.run)} | ${fmt(p50(row.serial) - directP50)} | ${fmt(p99(row.serial) - p99(directSerial))} | ${row.cpuMs} | ${row.machine} | ${row.target} |`,
      );
    printPeerTables(rows, charges, { directSerial, machine });
  } finally {
    await world.stop();
    await databases.settlement.drop();
    await databases.marketplace.drop();
  }
}

if (parts.includes('hosted')) {
  const databases = { settlement: await createTempDatabase(adminUrl), marketplace: await createTempDatabase(adminUrl) };
  const world = await startPaidWorld(databases, 32);
  try {
    const bench = await benchHosted(world, databases.marketplace.url, { deploys: 30, capacity: deploymentCount });
    // The same rail (a voucher per call) to both listings: what hosting adds is the runner's hop, not the payment.
    const lanes = async (serviceId: string) =>
      Promise.all(world.callers.map(async (caller) => voucherCall(await caller.market.openChannel(serviceId, '1000'))));
    const hostedLanes = await lanes(bench.hostedServiceId);
    const externalLanes = await lanes(bench.external);
    const hostedSerial = await serialOf(hostedLanes[0] as () => Promise<Outcome>);
    const externalSerial = await serialOf(externalLanes[0] as () => Promise<Outcome>);
    const externalRun = await closedLoopEach(externalLanes, seconds * 1000);
    const hostedRun = await closedLoopEach(hostedLanes, seconds * 1000);
    await bench.stop();
    const deploy = { p50: p50(bench.uploadToRunning), p99: p99(bench.uploadToRunning) };
    const added = p50(hostedSerial) - p50(externalSerial);
    const grown = bench.workerdBytesAfter - bench.workerdBytesBefore;
    const mib = (bytes: number) => fmt(bytes / 1024 ** 2, 1);
    console.log(
      `\nhosted mode (workerd runner), PostgreSQL; voucher calls, ${world.callers.length} callers for ${seconds} s, added latency with one call in flight (${serialCalls} calls)`,
    );
    console.log('| measure | value | target |');
    console.log('|---|---:|---|');
    console.log(
      `| upload-to-running p50 / p99 ms (${bench.uploadToRunning.length} deploys) | ${fmt(deploy.p50)} / ${fmt(deploy.p99)} | p50 < ${targets.uploadToRunningP50Ms} ms: ${deploy.p50 < targets.uploadToRunningP50Ms ? 'met' : 'NOT met'} |`,
    );
    console.log(
      `| paid call p50 / p99 ms, same Worker as an external provider on loopback (peer) | ${fmt(p50(externalSerial))} / ${fmt(p99(externalSerial))} | |`,
    );
    console.log(`| paid call p50 / p99 ms, hosted | ${fmt(p50(hostedSerial))} / ${fmt(p99(hostedSerial))} | |`);
    console.log(`| added by hosting, p50 ms | ${fmt(added)} | < ${targets.hostedAddedP50Ms} ms: ${added < targets.hostedAddedP50Ms ? 'met' : 'NOT met'} |`);
    console.log(
      `| calls/s, external (peer) / hosted | ${fmt(rate(externalRun), 0)} / ${fmt(rate(hostedRun), 0)} (errors ${errors(externalRun)} / ${errors(hostedRun)}) | |`,
    );
    console.log(
      `| running deployments in one workerd; its RSS before / after, MiB; per deployment | ${bench.deployments}; ${mib(bench.workerdBytesBefore)} / ${mib(bench.workerdBytesAfter)}; ${mib(grown / bench.deployments)} | ≥ ${targets.deployments} in < 2 GiB: ${bench.deployments >= targets.deployments && bench.workerdBytesAfter < targets.deploymentsBytes ? 'met' : 'NOT met'} |`,
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
