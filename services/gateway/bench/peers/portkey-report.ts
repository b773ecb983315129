import type { BenchMachine } from '@platform/testkit/bench-machine';
import { type EngineResult, errorCount, ms } from '../bench-report.ts';
import type { CallRun, StreamRun } from '../load-process.ts';
import type { PeerPhases } from './portkey.ts';

/*
 * The gateway beside Portkey's: one table of what each adds over the upstream called directly (each against its
 * own direct calls of the same minute), with our rows as ratios to Portkey's, and the targets against it.
 */

interface Figures {
  fixedP50: number;
  fixedP99: number;
  serialP50: number;
  perSecond: number;
  concurrency: number;
  vsDirect: number;
  microsPerCall: number;
  errors: number;
  ttfbPaced?: number;
  ttfbBursts?: number;
  chunkP99?: number;
}

const added = (through: CallRun, direct: CallRun, at: 'p50' | 'p99') => through.latencies[at] - direct.latencies[at];
const streamFigures = (s: { direct: StreamRun; through: StreamRun; paced: { direct: StreamRun; through: StreamRun } }) => ({
  ttfbPaced: s.paced.through.ttfb.p50 - s.paced.direct.ttfb.p50,
  ttfbBursts: s.through.ttfb.p50 - s.direct.ttfb.p50,
  chunkP99: s.through.chunkDelay.p99 - s.direct.chunkDelay.p99,
});

function peerFigures(peer: PeerPhases): Figures {
  const best = peer.max.reduce((a, b) => (b.run.perSecond > a.run.perSecond ? b : a));
  const { streams } = peer;
  return {
    fixedP50: added(peer.fixed.peer, peer.fixed.direct, 'p50'),
    fixedP99: added(peer.fixed.peer, peer.fixed.direct, 'p99'),
    serialP50: added(peer.serial.peer, peer.serial.direct, 'p50'),
    perSecond: best.run.perSecond,
    concurrency: best.concurrency,
    vsDirect: best.run.perSecond / peer.directMax.perSecond,
    microsPerCall: best.microsPerCall,
    errors: errorCount(peer.fixed.peer) + peer.max.reduce((sum, m) => sum + errorCount(m.run), 0) + streams.peer.errors + streams.paced.peer.errors,
    ...streamFigures({ direct: streams.direct, through: streams.peer, paced: { direct: streams.paced.direct, through: streams.paced.peer } }),
  };
}

function ourFigures(result: EngineResult): Figures {
  const best = result.max.reduce((a, b) => (b.run.perSecond > a.run.perSecond ? b : a));
  const s = result.streams;
  return {
    fixedP50: added(result.fixed.gateway, result.fixed.direct, 'p50'),
    fixedP99: added(result.fixed.gateway, result.fixed.direct, 'p99'),
    serialP50: added(result.serial.gateway, result.serial.direct, 'p50'),
    perSecond: best.run.perSecond,
    concurrency: best.concurrency,
    vsDirect: best.run.perSecond / result.directMax.perSecond,
    microsPerCall: best.usage.gatewayMicrosPerCall,
    errors: errorCount(result.fixed.gateway) + result.max.reduce((sum, m) => sum + errorCount(m.run), 0) + (s ? s.gateway.errors + s.paced.gateway.errors : 0),
    ...(s ? streamFigures({ direct: s.direct, through: s.gateway, paced: { direct: s.paced.direct, through: s.paced.gateway } }) : {}),
  };
}

/** `value` and, for our rows, its ratio to Portkey's (under 1× is less added latency or CPU, over 1× more calls/s). */
function cell(value: number | undefined, peer: number | undefined, format: (n: number) => string): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  if (peer === undefined) return format(value);
  const ratio = peer > 0 && value >= 0 ? ` (${(value / peer).toFixed(2)}×)` : '';
  return `${format(value)}${ratio}`;
}

const whole = (n: number) => String(Math.round(n));

export function printPortkeyComparison(ours: EngineResult[], peer: PeerPhases, machine: BenchMachine): void {
  const theirs = peerFigures(peer);
  console.log(
    `\nthe gateway beside ${peer.name} (same upstream, client and bodies; added = minus the direct call of the same minute; our rows: value (ratio to Portkey's))`,
  );
  console.log(
    '| gateway | metering | added p50 at 1000/s, ms | added p99 at 1000/s, ms | added p50 one at a time, ms | most calls/s (in flight) | vs direct | µs CPU per call | stream TTFB added p50, paced, ms | in bursts, ms | chunk delay added p99, ms | errors |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const row = (name: string, metering: string, f: Figures, base?: Figures) =>
    console.log(
      `| ${name} | ${metering} | ${cell(f.fixedP50, base?.fixedP50, ms)} | ${cell(f.fixedP99, base?.fixedP99, ms)} | ${cell(f.serialP50, base?.serialP50, ms)} | ` +
        `${cell(f.perSecond, base?.perSecond, whole)} (${f.concurrency}) | ${f.vsDirect.toFixed(2)}x | ${cell(f.microsPerCall, base?.microsPerCall, whole)} | ` +
        `${cell(f.ttfbPaced, base?.ttfbPaced, ms)} | ${cell(f.ttfbBursts, base?.ttfbBursts, ms)} | ${cell(f.chunkP99, base?.chunkP99, ms)} | ${f.errors} |`,
    );
  row(peer.name, 'none (no ledger)', theirs);
  const metering = (engine: string) =>
    engine === 'PGlite'
      ? 'a ledger row per call, PGlite'
      : engine.includes('ASYNC')
        ? 'a ledger row per call, asynchronous commit'
        : 'a ledger row per call, durable';
  for (const result of ours) row(`platform gateway, ${result.engine}`, metering(result.engine), ourFigures(result), theirs);
  const durable = ours.find((r) => r.engine === 'PostgreSQL');
  if (!durable) return;
  const f = ourFigures(durable);
  const targets: Array<[string, string, boolean]> = [
    [`added p50 at 1000/s ≤ ${peer.name}'s`, `${ms(f.fixedP50)} vs ${ms(theirs.fixedP50)} ms`, f.fixedP50 <= theirs.fixedP50],
    [`added p99 at 1000/s ≤ ${peer.name}'s`, `${ms(f.fixedP99)} vs ${ms(theirs.fixedP99)} ms`, f.fixedP99 <= theirs.fixedP99],
    [`capacity ≥ ${peer.name}'s`, `${whole(f.perSecond)} vs ${whole(theirs.perSecond)}/s`, f.perSecond >= theirs.perSecond],
  ];
  console.log(`\ntargets against ${peer.name} (issue 36: durable metering on)${machine.reportable ? '' : ' (NOT REPORTABLE: the machine was busy)'}`);
  console.log('| target (PostgreSQL, durable bookings) | measured | |');
  console.log('|---|---:|---|');
  for (const [target, measured, met] of targets) console.log(`| ${target} | ${measured} | ${met ? 'met' : '**not met**'} |`);
}
