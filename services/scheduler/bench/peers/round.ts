import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { max, percentile } from '@platform/testkit/stats';
import { type Alarm, planAlarms } from './alarm.ts';
import type { PeerOptions, PeerResult } from './types.ts';

/**
 * How far ahead the common due moment is set: 2 s plus 0.3 ms per job (an insert rate no peer
 * undercuts), so the bulk insert is finished before anything falls due and is never measured.
 */
export const leadMs = (count: number): number => 2_000 + Math.ceil(count * 0.3);

/** Waiting budget after the due moment: the spread, plus 30 s or 5 ms per job, whichever is longer. */
const drainBudgetMs = (count: number, spreadMs: number): number => spreadMs + Math.max(30_000, count * 5);

export interface Summary {
  firesPerSecond: number;
  /** Lateness percentiles in ms (receive time minus scheduled_for). */
  p50: number;
  p99: number;
  max: number;
}

/**
 * firesPerSecond = count / ((lastReceiveMs - firstScheduledMs) / 1000)
 *
 * The window opens when the first job falls due, not when it was inserted, so insert time and the
 * idle wait before the due moment are excluded, while detection delay (poll interval) and dispatch
 * time are included. With a spread the window cannot be shorter than the spread, so fires/s is then
 * bounded by the arrival rate (count / spread) and lateness is the figure that matters.
 */
export function summarize(latenesses: readonly number[], firstScheduledMs: number, lastReceiveMs: number, count: number): Summary {
  const sorted = latenesses.slice().sort((a, b) => a - b);
  // Clamp to 1 ms so a degenerate window cannot divide by zero or go negative.
  const windowMs = Math.max(1, lastReceiveMs - firstScheduledMs);
  return { firesPerSecond: count / (windowMs / 1000), p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: max(sorted) };
}

/**
 * The measured part shared by every peer, run once its workers are already polling: plan the
 * alarms, bulk insert them via `insert`, then wait until the sink saw every one and summarize.
 */
export async function measureRound(name: string, opts: PeerOptions, insert: (alarms: Alarm[]) => Promise<void>): Promise<PeerResult> {
  const { count, spreadMs, sink } = opts;
  // Every contender first fires a warm-up burst of its own, unmeasured: its queries, its HTTP connections and the
  // JIT are then as warm as a running service's, and no one pays for being first.
  const warmUp = Math.min(1_000, count);
  sink.reset();
  const warmDueAt = Date.now() + leadMs(warmUp);
  await insert(planAlarms(warmUp, 0, warmDueAt));
  await sink.waitFor(warmUp, warmDueAt - Date.now() + drainBudgetMs(warmUp, 0));
  sink.reset();
  const dueAt = Date.now() + leadMs(count);
  await insert(planAlarms(count, spreadMs, dueAt));
  const insertDoneAt = Date.now();
  if (insertDoneAt >= dueAt) {
    throw new Error(`${name}: inserting ${count} jobs overran the due moment by ${insertDoneAt - dueAt} ms`);
  }
  // CPU per fire does not depend on how busy the machine is the way fires/s does: it shows where a contender
  // spends, in its own process and in PostgreSQL, even on a shared machine. The wait before the due moment is
  // counted (a poller spends there), the insert is not.
  const from = cpuSnapshot([process.pid]);
  await sink.waitFor(count, dueAt - insertDoneAt + drainBudgetMs(count, spreadMs));
  const to = cpuSnapshot([process.pid]);
  const cpu = cpuBetween(from, to);
  const seconds = ((to?.at ?? 0) - (from?.at ?? 0)) / 1000;
  const perThousandFires = (cores: number) => (cores * seconds * 1000 * 1000) / count;
  const database = opts.databaseUrl === '' ? [] : [new URL(opts.databaseUrl).pathname.slice(1)];
  return {
    name,
    count,
    ...summarize(sink.lateness(), dueAt, sink.lastReceivedAt(), count),
    processCpuMsPer1k: perThousandFires(cpu.named(process.pid)),
    databaseCpuMsPer1k: database.length === 0 ? 0 : perThousandFires(cpu.postgresOf(database)),
  };
}
