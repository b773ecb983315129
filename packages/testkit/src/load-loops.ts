import { setTimeout as sleep } from 'node:timers/promises';

/** One call's answer as a load loop counts it: ok, or the label its error is tallied under. */
export type Outcome = { ok: true } | { ok: false; label: string };

export interface LoopTally {
  ok: number;
  errors: Map<string, number>;
  /** Latency of each ok call, ms. */
  latencies: number[];
  /** Closed loop: the window; open loop: from the first due time to the last answer. */
  seconds: number;
  /** Open loop only: how late each call was sent after its due time, ms. */
  sendLags: number[];
}

function tally(): LoopTally {
  return { ok: 0, errors: new Map(), latencies: [], seconds: 0, sendLags: [] };
}

function count(into: LoopTally, outcome: Outcome, latency: number): void {
  if (outcome.ok) {
    into.ok++;
    into.latencies.push(latency);
  } else into.errors.set(outcome.label, (into.errors.get(outcome.label) ?? 0) + 1);
}

/**
 * Closed loop: `concurrency` callers each keep one call in flight for `durationMs`. Answers arriving after the
 * window are drained but not counted; after an error a caller pauses 1 ms, so a refusing service (answering in
 * microseconds) does not turn the run into an error spin.
 */
export function closedLoop(concurrency: number, durationMs: number, send: () => Promise<Outcome>): Promise<LoopTally> {
  return closedLoopEach(
    Array.from({ length: concurrency }, () => send),
    durationMs,
  );
}

/** A closed loop whose callers each send their own way (calls that must stay in order per caller: vouchers, sequences). */
export async function closedLoopEach(sends: ReadonlyArray<() => Promise<Outcome>>, durationMs: number): Promise<LoopTally> {
  const result = tally();
  const end = performance.now() + durationMs;
  const lane = async (send: () => Promise<Outcome>): Promise<void> => {
    while (performance.now() < end) {
      const sent = performance.now();
      const outcome = await send();
      const received = performance.now();
      if (received > end) return;
      count(result, outcome, received - sent);
      if (!outcome.ok) await sleep(1);
    }
  };
  await Promise.all(sends.map(lane));
  result.seconds = durationMs / 1000;
  return result;
}

/**
 * Open loop: call i is due at t0 + i/rate whatever happened to earlier ones, and its latency runs from that due
 * time (not from when it was sent) to its answer, so a stall is charged to every call it delayed instead of
 * hiding them (coordinated omission).
 */
export async function openLoop(rate: number, durationMs: number, send: () => Promise<Outcome>): Promise<LoopTally> {
  const result = tally();
  const total = Math.round((rate * durationMs) / 1000);
  const interval = 1000 / rate;
  const t0 = performance.now() + 5;
  let lastAnswer = t0;
  await new Promise<void>((resolve) => {
    let sent = 0;
    let answered = 0;
    const tick = (): void => {
      const now = performance.now();
      while (sent < total && t0 + sent * interval <= now) {
        const due = t0 + sent * interval;
        sent++;
        result.sendLags.push(now - due);
        void send().then((outcome) => {
          lastAnswer = performance.now();
          count(result, outcome, lastAnswer - due);
          if (++answered === total) resolve();
        });
      }
      if (sent < total) setTimeout(tick, Math.max(0, t0 + sent * interval - performance.now()));
    };
    setTimeout(tick, 5);
  });
  result.seconds = (lastAnswer - t0) / 1000;
  return result;
}
