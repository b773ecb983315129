import type { Env } from '@platform/kit/config';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.ts';
import { p50 } from './stats.ts';

/*
 * What observability costs a service, for the gateway's and settlement's benches (issue 35): the same service four
 * ways, side by side in one run: without metrics or tracing, with `/metrics` served and scraped every second (a
 * Prometheus ten to fifteen times as eager as its default), and with that and every request traced and exported to a
 * local OTLP/HTTP receiver (and, fourth, tracing one request in ten).
 *
 * Each way runs as two processes (slots), each on its own database, all at once, warmed and then measured in turns
 * (A1 B1 C1 D1 A2 … D2, then rotated), so a machine whose speed drifts within the minute (ours do) moves all alike; each
 * figure is the median of its turns. Two processes a way, because two processes of the very same service, same
 * settings, differed by 6 to 13 % in one run with one each (code layout, where the kernel puts them): more than the
 * costs measured. A cost is the median of the rounds' costs, each read between the two setups' turns of one round
 * (`pairedCost`). `BENCH_OBSERVE_SAME=1` runs the check: the metrics slots get no metrics either, and the table shows
 * what two identical setups differ by on this machine; `BENCH_OBSERVE_ROUNDS` sets the rounds.
 */

/**
 * The last traces one call in ten (`parentbased_traceidratio`, 0.1): how an operator traces a busy service, beside
 * the row, which traces every call.
 */
export type ObservabilitySetup = 'off' | 'metrics' | 'metrics + tracing' | 'metrics + tracing 1 in 10';
export const observabilitySetups: readonly ObservabilitySetup[] = ['off', 'metrics', 'metrics + tracing', 'metrics + tracing 1 in 10'];

/** The bearer the metrics setups serve `/metrics` behind. */
export const benchMetricsToken = 'bench-metrics-token';

/** What one measured turn gives: throughput, and the service's CPU per operation where the bench reads it. */
export interface TurnResult {
  perSecond: number;
  microsCpuPerOp?: number;
}

export interface ObservabilityRow {
  setup: ObservabilitySetup;
  perSecond: number;
  microsCpuPerOp: number;
  turns: number[];
  /** The setup's mean throughput in each round (its two processes' turns), for costs paired by round. */
  byRound: number[];
}

/** One process of one setup. */
export interface ObservabilitySlot {
  setup: ObservabilitySetup;
  /** 1 or 2. */
  instance: number;
  /** `off-1`, `metrics + tracing-2`: for log lines. */
  label: string;
}

/** Two processes per setup, in the order they are started and first measured. */
export const observabilitySlots: readonly ObservabilitySlot[] = [1, 2].flatMap((instance) =>
  observabilitySetups.map((setup) => ({ setup, instance, label: `${setup}-${instance}` })),
);

/** The slot of a setup's first or second process: the object `observabilitySlots` holds, for maps keyed by slot. */
export function slotOf(setup: ObservabilitySetup, instance: number): ObservabilitySlot {
  const slot = observabilitySlots.find((candidate) => candidate.setup === setup && candidate.instance === instance);
  if (slot === undefined) throw new Error(`no process ${instance} of ${setup}`);
  return slot;
}

/**
 * `work`'s result and the µs of CPU the measured process spent on each of its operations meanwhile (`readCpu`: that
 * process's `process.cpuUsage()`, read before and after; `operations`: what `work` did, answered or failed).
 *
 * @example const { result, micros } = await cpuPerOperation(() => service.ask('cpu'), () => load.ask('openLoop', args), (run) => run.ok)
 */
export async function cpuPerOperation<R>(
  readCpu: () => Promise<{ user: number; system: number }>,
  work: () => Promise<R>,
  operations: (result: R) => number,
): Promise<{ result: R; micros: number }> {
  const before = await readCpu();
  const result = await work();
  const after = await readCpu();
  return { result, micros: (after.user + after.system - before.user - before.system) / Math.max(1, operations(result)) };
}

/** The A/A check (BENCH_OBSERVE_SAME=1): the metrics setup is the off setup again. */
const sameCheck = process.env.BENCH_OBSERVE_SAME === '1';

/** Rounds of turns (BENCH_OBSERVE_ROUNDS, default 5): more narrow the median of a noisy machine's rounds. */
export const observabilityRounds = Number(process.env.BENCH_OBSERVE_ROUNDS ?? 5);

/** The setting each setup adds to a service's environment. */
export function observabilityEnv(setup: ObservabilitySetup, receiver: OtlpReceiver): Env {
  if (setup === 'off' || (sameCheck && setup === 'metrics')) return {};
  const metrics = { PLATFORM_METRICS_TOKEN: benchMetricsToken };
  if (setup === 'metrics') return metrics;
  // The exporter's batch defaults (5 s, 2,048 spans a batch) would drop spans at thousands a second: the queue is
  // sized for the rate, as an operator tracing every request would size it.
  const traced = { ...metrics, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_MAX_QUEUE_SIZE: '65536', OTEL_BSP_SCHEDULE_DELAY: '1000' };
  if (setup === 'metrics + tracing') return traced;
  return { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' };
}

/** A receiver that counts spans and keeps none (thousands a second for a minute), in the bench's own process. */
export function startCountingReceiver(): Promise<OtlpReceiver> {
  return startOtlpReceiver({ keep: false });
}

/** Scrapes `url` + `/metrics` every `everyMs` until stopped; counts the scrapes and fails on any but a 200. */
export function scrapeEvery(url: string, everyMs = 1_000): { stop: () => { scrapes: number; failures: number } } {
  let scrapes = 0;
  let failures = 0;
  const timer = setInterval(() => {
    fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${benchMetricsToken}` } }).then(
      async (answer) => {
        await answer.text();
        if (answer.status === 200) scrapes++;
        else failures++;
      },
      () => failures++,
    );
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return { scrapes, failures };
    },
  };
}

/**
 * Warms every slot (`warmUp`: load for a while, then analyze its database), then runs `turn(slot)` for every slot in
 * rotating order, `rounds` times, and gives each setup's median over its slots' turns, and its mean in each round.
 *
 * @example const rows = await inTurns(3, (slot) => warm(services[slot.label]), (slot) => measureCapacity(services[slot.label]))
 */
export async function inTurns(
  rounds: number,
  warmUp: (slot: ObservabilitySlot) => Promise<void>,
  turn: (slot: ObservabilitySlot) => Promise<TurnResult>,
): Promise<ObservabilityRow[]> {
  for (const slot of observabilitySlots) await warmUp(slot);
  const results = new Map<ObservabilitySetup, TurnResult[][]>(observabilitySetups.map((setup) => [setup, []]));
  for (let round = 0; round < rounds; round++) {
    for (const perRound of results.values()) perRound.push([]);
    for (let i = 0; i < observabilitySlots.length; i++) {
      const slot = observabilitySlots[(round + i) % observabilitySlots.length] as ObservabilitySlot;
      results.get(slot.setup)?.[round]?.push(await turn(slot));
    }
  }
  return observabilitySetups.map((setup) => {
    const perRound = results.get(setup) ?? [];
    const turns = perRound.flat();
    return {
      setup,
      perSecond: p50(turns.map((t) => t.perSecond)),
      microsCpuPerOp: p50(turns.map((t) => t.microsCpuPerOp ?? Number.NaN).filter((v) => !Number.isNaN(v))),
      turns: turns.map((t) => t.perSecond),
      byRound: perRound.map((round) => round.reduce((sum, t) => sum + t.perSecond, 0) / round.length),
    };
  });
}

/**
 * What `to` costs against `from`, in percent of throughput: the median over rounds of each round's cost, both setups
 * measured within the same round. A shared machine drifts over minutes (the same setup's turns spread by a third on
 * the AMD EPYC class), and a round takes half a minute, so a cost is read between turns close in time.
 */
export function pairedCost(from: ObservabilityRow, to: ObservabilityRow): Spread {
  return spread(from.byRound.map((base, round) => (1 - (to.byRound[round] as number) / base) * 100));
}

/** The median of rounds' values, and their lowest and highest. */
export interface Spread {
  median: number;
  low: number;
  high: number;
}

function spread(values: readonly number[]): Spread {
  return { median: p50(values), low: Math.min(...values), high: Math.max(...values) };
}

/** The targets: metrics cost under 3 % of throughput, tracing (on top of metrics) under 10 %. */
export const observabilityTargets = { metricsPercent: 3, tracingPercent: 10 };

/** The table, each setup as a ratio of the one before it and of `off`, and the two targets judged. */
export function printObservabilityTable(
  what: string,
  rows: readonly ObservabilityRow[],
  notes: { spans: number; scrapes: number; scrapeFailures: number },
): void {
  const [off, metrics, traced, sampled] = rows as [ObservabilityRow, ObservabilityRow, ObservabilityRow, ObservabilityRow];
  console.log(
    `\nobservability cost: ${what}, ${off.byRound.length} rounds of turns (two processes a setup, one turn each a round); cost: the median of the rounds' costs, each between turns of the same round${sameCheck ? '; BENCH_OBSERVE_SAME=1: the metrics row is the off setup again' : ''}`,
  );
  console.log(`| setup | ${what}/s (median turn) | vs off | cost, paired by round | rounds' costs, lowest–highest | µs CPU per op | turns, slowest–fastest |`);
  console.log('|---|---:|---:|---:|---|---:|---|');
  const percent = (value: number) => `${value.toFixed(1)} %`;
  for (const [row, before] of [
    [off, undefined],
    [metrics, off],
    [traced, metrics],
    [sampled, metrics],
  ] as const) {
    const vsOff = (row.perSecond / off.perSecond).toFixed(3);
    const cost = before ? pairedCost(before, row) : undefined;
    const added = cost ? `${percent(cost.median)}${before === off ? '' : ' (vs metrics)'}` : '–';
    const spread = cost ? `${percent(cost.low)} – ${percent(cost.high)}` : '–';
    const cpu = Number.isNaN(row.microsCpuPerOp) ? '–' : row.microsCpuPerOp.toFixed(0);
    console.log(
      `| ${row.setup} | ${Math.round(row.perSecond)} | ${vsOff}x | ${added} | ${spread} | ${cpu} | ${Math.round(Math.min(...row.turns))}–${Math.round(Math.max(...row.turns))} |`,
    );
  }
  console.log(`spans received: ${notes.spans}; scrapes: ${notes.scrapes}, failed: ${notes.scrapeFailures}`);
  const judge = (measured: number, limit: number) => `${measured.toFixed(1)} % (target < ${limit} %: ${measured < limit ? 'met' : 'NOT MET'})`;
  console.log(
    `metrics cost ${judge(pairedCost(off, metrics).median, observabilityTargets.metricsPercent)}; tracing cost ${judge(pairedCost(metrics, traced).median, observabilityTargets.tracingPercent)}; one call in ten traced: ${percent(pairedCost(metrics, sampled).median)}`,
  );
}

/**
 * The steadier measure (BENCH_OBSERVE_SIDE, default on): one process of each setup (its first and second in turn,
 * round by round) driven at the same fixed rate at the same time, each by its own load generator, in rounds; a
 * setup's cost is the median over rounds of its µs of CPU a call minus the setup before it in the same round. Every
 * process sees the same machine in the same seconds, so its swings cancel out (on the AMD EPYC class of 2026-12-07,
 * two identical processes so measured differed by a median of 0 µs a call, rounds from −7 to +16, where turns gave
 * costs from −24 % to +35 %). It reads CPU a call at that rate, not throughput: at a fixed rate below capacity a call
 * costs more CPU than at capacity (less batching), so the percentages here are of that larger base.
 */
export const observabilitySideBySide = process.env.BENCH_OBSERVE_SIDE !== '0';

/** What `sideBySide` gives: each setup's µs of CPU a call, one value a round. */
export type SideBySideRounds = Map<ObservabilitySetup, number[]>;

/**
 * `rounds` rounds of `measure(setup, instance)` for every setup at once (each resolving to its µs of CPU a call in
 * that round), with the setup's first process in odd rounds and its second in even ones: how V8 compiled one
 * process's hot paths (an inline cache gone megamorphic here and not there) is that process's for its life, and two
 * processes a setup keep one process's luck from being read as its setup's cost.
 *
 * @example const rounds = await sideBySide(10, (setup, instance) => cpuPerCallAtRate(gateways[setup][instance - 1]))
 */
export async function sideBySide(rounds: number, measure: (setup: ObservabilitySetup, instance: number) => Promise<number>): Promise<SideBySideRounds> {
  const results: SideBySideRounds = new Map(observabilitySetups.map((setup) => [setup, []]));
  for (let round = 0; round < rounds; round++) {
    const instance = 1 + (round % 2);
    const measured = await Promise.all(observabilitySetups.map((setup) => measure(setup, instance)));
    for (const [i, setup] of observabilitySetups.entries()) results.get(setup)?.push(measured[i] as number);
  }
  return results;
}

/** The median over rounds of `to` minus `from` in the same round, and the rounds' lowest and highest difference. */
export function pairedDifference(from: readonly number[], to: readonly number[]): Spread {
  return spread(from.map((base, round) => (to[round] as number) - base));
}

/** The side-by-side table: each setup's µs of CPU a call, and what it adds to the setup before it (tracing: to metrics). */
export function printSideBySideTable(what: string, rate: number, results: SideBySideRounds): void {
  const [off, metrics, traced, sampled] = observabilitySetups.map((setup) => results.get(setup) ?? []) as [number[], number[], number[], number[]];
  const one = what.replace(/s$/, '');
  console.log(
    `\nobservability cost side by side: ${what}, one process a setup at ${rate}/s each, all at once (its first and second process in turn), ${off.length} rounds; cost: the median of the rounds' differences in µs of CPU a ${one}`,
  );
  console.log(`| setup | µs CPU a ${one} (median round) | added, paired by round | rounds' added, lowest–highest | added, % of the setup before |`);
  console.log('|---|---:|---:|---|---:|');
  console.log(`| off | ${p50(off).toFixed(0)} | – | – | – |`);
  for (const [setup, row, before] of [
    ['metrics', metrics, off],
    ['metrics + tracing', traced, metrics],
    ['metrics + tracing 1 in 10', sampled, metrics],
  ] as const) {
    const added = pairedDifference(before, row);
    console.log(
      `| ${setup} | ${p50(row).toFixed(0)} | ${added.median.toFixed(1)}${before === off ? '' : ' (vs metrics)'} | ${added.low.toFixed(1)} – ${added.high.toFixed(1)} | ${((100 * added.median) / p50(before)).toFixed(1)} % |`,
    );
  }
}
