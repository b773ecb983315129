import type { Env } from '@platform/kit/config';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.ts';
import { p50 } from './stats.ts';

/*
 * What observability costs a service, for the gateway's and settlement's benches (issue 35): the same service three
 * ways, side by side in one run: without metrics or tracing, with `/metrics` served and scraped every second (a
 * Prometheus ten to fifteen times as eager as its default), and with that and every request traced and exported to a
 * local OTLP/HTTP receiver. The three run at once, each on its own database, and are measured in turns (A B C, B C A,
 * C A B), so a machine whose speed drifts within the minute (ours do) moves all three alike; each figure is the
 * median of its turns.
 */

export type ObservabilitySetup = 'off' | 'metrics' | 'metrics + tracing';
export const observabilitySetups: readonly ObservabilitySetup[] = ['off', 'metrics', 'metrics + tracing'];

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
}

/** The setting each setup adds to a service's environment. */
export function observabilityEnv(setup: ObservabilitySetup, receiver: OtlpReceiver): Env {
  if (setup === 'off') return {};
  const metrics = { PLATFORM_METRICS_TOKEN: benchMetricsToken };
  if (setup === 'metrics') return metrics;
  // The exporter's batch defaults (5 s, 2,048 spans a batch) would drop spans at thousands a second: the queue is
  // sized for the rate, as an operator tracing every request would size it.
  return { ...metrics, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_MAX_QUEUE_SIZE: '65536', OTEL_BSP_SCHEDULE_DELAY: '1000' };
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
 * Runs `turn(setup)` for each setup in rotating order, `rounds` times, and gives each setup's median.
 *
 * @example const rows = await inTurns(3, (setup) => measureCapacity(services[setup]))
 */
export async function inTurns(rounds: number, turn: (setup: ObservabilitySetup) => Promise<TurnResult>): Promise<ObservabilityRow[]> {
  const results = new Map<ObservabilitySetup, TurnResult[]>(observabilitySetups.map((setup) => [setup, []]));
  for (let round = 0; round < rounds; round++)
    for (let i = 0; i < observabilitySetups.length; i++) {
      const setup = observabilitySetups[(round + i) % observabilitySetups.length] as ObservabilitySetup;
      results.get(setup)?.push(await turn(setup));
    }
  return observabilitySetups.map((setup) => {
    const turns = results.get(setup) ?? [];
    return {
      setup,
      perSecond: p50(turns.map((t) => t.perSecond)),
      microsCpuPerOp: p50(turns.map((t) => t.microsCpuPerOp ?? Number.NaN).filter((v) => !Number.isNaN(v))),
      turns: turns.map((t) => t.perSecond),
    };
  });
}

/** The targets: metrics cost under 3 % of throughput, tracing (on top of metrics) under 10 %. */
export const observabilityTargets = { metricsPercent: 3, tracingPercent: 10 };

/** The table, each setup as a ratio of the one before it and of `off`, and the two targets judged. */
export function printObservabilityTable(
  what: string,
  rows: readonly ObservabilityRow[],
  notes: { spans: number; scrapes: number; scrapeFailures: number },
): void {
  const [off, metrics, traced] = rows as [ObservabilityRow, ObservabilityRow, ObservabilityRow];
  const cost = (from: ObservabilityRow, to: ObservabilityRow) => (1 - to.perSecond / from.perSecond) * 100;
  console.log(`\nobservability cost: ${what}, medians of ${off.turns.length} turns each, the three taken in turns`);
  console.log(`| setup | ${what}/s | vs off | cost | µs CPU per op | turns |`);
  console.log('|---|---:|---:|---:|---:|---|');
  for (const [row, before] of [
    [off, undefined],
    [metrics, off],
    [traced, metrics],
  ] as const) {
    const vsOff = (row.perSecond / off.perSecond).toFixed(3);
    const added = before ? `${cost(before, row).toFixed(1)} %${before === off ? '' : ' (vs metrics)'}` : '–';
    const cpu = Number.isNaN(row.microsCpuPerOp) ? '–' : row.microsCpuPerOp.toFixed(0);
    console.log(`| ${row.setup} | ${Math.round(row.perSecond)} | ${vsOff}x | ${added} | ${cpu} | ${row.turns.map(Math.round).join(', ')} |`);
  }
  console.log(`spans received: ${notes.spans}; scrapes: ${notes.scrapes}, failed: ${notes.scrapeFailures}`);
  const judge = (measured: number, limit: number) => `${measured.toFixed(1)} % (target < ${limit} %: ${measured < limit ? 'met' : 'NOT MET'})`;
  console.log(
    `metrics cost ${judge(cost(off, metrics), observabilityTargets.metricsPercent)}; tracing cost ${judge(cost(metrics, traced), observabilityTargets.tracingPercent)}`,
  );
}
