import type { BenchMachine } from '@platform/testkit/bench-machine';
import type { CallRun, StreamRun } from './load-process.ts';

/* The benchmark's tables, in the README's Markdown: the peer (the upstream called directly) beside every figure. */

export interface Usage {
  /** Cores of 2 (or however many the machine has) over the run. */
  gateway: number;
  postgres: number;
  machine: number;
  /** The gateway process's CPU time per call answered in the run, µs: comparable across busy and quiet machines. */
  gatewayMicrosPerCall: number;
}

export interface EngineResult {
  engine: string;
  fixed: { direct: CallRun; gateway: CallRun };
  /** One call at a time (closed loop of 1): the added latency with no queueing anywhere. */
  serial: { direct: CallRun; gateway: CallRun };
  max: Array<{ concurrency: number; run: CallRun; usage: Usage }>;
  directMax: CallRun;
  /** Lanes that start together (`concurrency` at a time), and `paced`: the same count started evenly spaced. */
  streams?: { direct: StreamRun; gateway: StreamRun; paced: { direct: StreamRun; gateway: StreamRun } };
}

export interface ReportSetup {
  machine: BenchMachine;
  postgres: string;
  cores: number;
  fixedRate: number;
  streams: { count: number; concurrency: number; chunks: number; chunkIntervalMs: number };
  targets: { addedP50Ms: number; addedP99Ms: number; ttfbAddedP50Ms: number; meteredPerSecond: number; pgliteMeteredPerSecond: number; chunkAddedMs: number };
}

export function errorCount(run: CallRun): number {
  return Object.values(run.errors).reduce((sum, n) => sum + n, 0);
}

export function ms(value: number): string {
  return Number.isNaN(value) ? '–' : value.toFixed(2);
}

function cores(value: number): string {
  return Number.isNaN(value) ? '–' : value.toFixed(2);
}

function best(result: EngineResult) {
  return result.max.reduce((a, b) => (b.run.perSecond > a.run.perSecond ? b : a));
}

export function printReport(all: EngineResult[], setup: ReportSetup): void {
  const { machine } = setup;
  console.log(
    `\nmachine: ${machine.description} (class ${machine.machineClass}); busy before the run: ${cores(machine.busyBefore)} cores${machine.reportable ? '' : ' (NOT REPORTABLE)'}`,
  );
  console.log(`postgres: ${setup.postgres}`);
  printLatencyTables(all, setup);
  printThroughputTable(all, setup.cores);
  printStreamTable(all, setup);
  printTargets(all, setup);
}

function printLatencyTables(all: EngineResult[], setup: ReportSetup): void {
  console.log(`\nnon-streaming calls at a fixed ${setup.fixedRate}/s (open loop, latency from each call's due time to its last byte), ms`);
  console.log('| database | direct p50 | direct p99 | gateway p50 | gateway p99 | added p50 | added p99 | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of all) {
    const { direct, gateway: through } = r.fixed;
    console.log(
      `| ${r.engine} | ${ms(direct.latencies.p50)} | ${ms(direct.latencies.p99)} | ${ms(through.latencies.p50)} | ${ms(through.latencies.p99)} | ` +
        `**${ms(through.latencies.p50 - direct.latencies.p50)}** | **${ms(through.latencies.p99 - direct.latencies.p99)}** | ${errorCount(through)} |`,
    );
  }
  console.log('\none call at a time (closed loop of 1, 3 s), ms');
  console.log('| database | direct p50 | direct p99 | gateway p50 | gateway p99 | added p50 | added p99 |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of all) {
    const { direct, gateway: through } = r.serial;
    console.log(
      `| ${r.engine} | ${ms(direct.latencies.p50)} | ${ms(direct.latencies.p99)} | ${ms(through.latencies.p50)} | ${ms(through.latencies.p99)} | ` +
        `${ms(through.latencies.p50 - direct.latencies.p50)} | ${ms(through.latencies.p99 - direct.latencies.p99)} |`,
    );
  }
}

function printThroughputTable(all: EngineResult[], machineCores: number): void {
  console.log(`\nmost metered calls per second (closed loop; CPU in cores of ${machineCores}, and the gateway's CPU time per call)`);
  console.log('| database | in flight | calls/s | vs direct | p50 ms | p99 ms | errors | CPU gateway | µs CPU per call | CPU postgres | CPU machine |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of all) {
    for (const m of r.max)
      console.log(
        `| ${r.engine} | ${m.concurrency} | ${Math.round(m.run.perSecond)} | ${(m.run.perSecond / r.directMax.perSecond).toFixed(2)}x | ${ms(m.run.latencies.p50)} | ${ms(m.run.latencies.p99)} | ` +
          `${errorCount(m.run)} | ${cores(m.usage.gateway)} | ${Math.round(m.usage.gatewayMicrosPerCall)} | ${cores(m.usage.postgres)} | ${cores(m.usage.machine)} |`,
      );
    console.log(
      `| ${r.engine}: upstream direct, same client | ${best(r).concurrency} | ${Math.round(r.directMax.perSecond)} | 1.00x | ${ms(r.directMax.latencies.p50)} | ${ms(r.directMax.latencies.p99)} | ${errorCount(r.directMax)} | – | – | – | – |`,
    );
  }
}

function printStreamTable(all: EngineResult[], setup: ReportSetup): void {
  const streamed = all.find((r) => r.streams);
  const streams = streamed?.streams;
  if (!streams) return;
  const { count, concurrency, chunks, chunkIntervalMs } = setup.streams;
  const every = (chunks * chunkIntervalMs) / concurrency;
  console.log(`\nstreams (${count}; ${chunks} chunks ${chunkIntervalMs} ms apart; ${streamed?.engine}), ms`);
  console.log('| starts | measure | direct p50 | direct p99 | gateway p50 | gateway p99 | added p50 | added p99 |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  const rows = [
    [`${concurrency} together each round`, streams],
    [`one every ${ms(every)} ms (≈ ${concurrency} open)`, streams.paced],
  ] as const;
  for (const [starts, { direct, gateway: through }] of rows) {
    console.log(
      `| ${starts} | time to first byte | ${ms(direct.ttfb.p50)} | ${ms(direct.ttfb.p99)} | ${ms(through.ttfb.p50)} | ${ms(through.ttfb.p99)} | **${ms(through.ttfb.p50 - direct.ttfb.p50)}** | **${ms(through.ttfb.p99 - direct.ttfb.p99)}** |`,
    );
    console.log(
      `| ${starts} | chunk delay (upstream write → client read) | ${ms(direct.chunkDelay.p50)} | ${ms(direct.chunkDelay.p99)} | ${ms(through.chunkDelay.p50)} | ${ms(through.chunkDelay.p99)} | ` +
        `**${ms(through.chunkDelay.p50 - direct.chunkDelay.p50)}** | **${ms(through.chunkDelay.p99 - direct.chunkDelay.p99)}** |`,
    );
  }
  const errors = (pick: 'direct' | 'gateway') => streams[pick].errors + streams.paced[pick].errors;
  console.log(`stream errors: direct ${errors('direct')}, gateway ${errors('gateway')}`);
}

/** The targets beside what this run measured. */
function printTargets(all: EngineResult[], setup: ReportSetup): void {
  const { targets, fixedRate } = setup;
  const rows: Array<[string, string, boolean]> = [];
  const postgres = all.find((r) => r.engine === 'PostgreSQL');
  if (postgres) {
    const { direct, gateway } = postgres.fixed;
    const clean = errorCount(gateway) === 0;
    const addedP50 = gateway.latencies.p50 - direct.latencies.p50;
    const addedP99 = gateway.latencies.p99 - direct.latencies.p99;
    rows.push([`PostgreSQL, durable: added p50 at ${fixedRate}/s < ${targets.addedP50Ms} ms`, `${ms(addedP50)} ms`, clean && addedP50 < targets.addedP50Ms]);
    rows.push([`PostgreSQL, durable: added p99 at ${fixedRate}/s < ${targets.addedP99Ms} ms`, `${ms(addedP99)} ms`, clean && addedP99 < targets.addedP99Ms]);
    const most = best(postgres).run.perSecond;
    rows.push([`PostgreSQL, durable: ≥ ${targets.meteredPerSecond} metered calls/s`, `${Math.round(most)}/s`, most >= targets.meteredPerSecond]);
    if (postgres.streams) {
      // Judged on paced starts: lanes in step start their streams in one burst, and the median stream then waits
      // behind half the burst in any single-threaded proxy; the burst's figure is in the stream table beside it.
      const { direct: d, gateway: g } = postgres.streams.paced;
      const ttfb = g.ttfb.p50 - d.ttfb.p50;
      rows.push([
        `PostgreSQL, durable: stream time to first byte (paced starts), added p50 < ${targets.ttfbAddedP50Ms} ms (was 8.76)`,
        `${ms(ttfb)} ms`,
        ttfb < targets.ttfbAddedP50Ms,
      ]);
      // Chunks are judged where they wait most: in the bursts.
      const chunk = postgres.streams.gateway.chunkDelay.p99 - postgres.streams.direct.chunkDelay.p99;
      rows.push([`stream chunks forwarded within ${targets.chunkAddedMs} ms of arrival (added p99)`, `${ms(chunk)} ms`, chunk < targets.chunkAddedMs]);
    }
  }
  const pglite = all.find((r) => r.engine === 'PGlite');
  if (pglite) {
    const most = best(pglite).run.perSecond;
    rows.push([
      `PGlite (npm start's default): ≥ ${targets.pgliteMeteredPerSecond} metered calls/s`,
      `${Math.round(most)}/s`,
      most >= targets.pgliteMeteredPerSecond,
    ]);
  }
  console.log(`\ntargets${setup.machine.reportable ? '' : ' (NOT REPORTABLE: the machine was busy)'}`);
  console.log('| target | measured | |');
  console.log('|---|---:|---|');
  for (const [target, measured, met] of rows) console.log(`| ${target} | ${measured} | ${met ? 'met' : '**not met**'} |`);
}
