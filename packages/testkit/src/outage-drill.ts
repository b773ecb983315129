import type { DatabaseOutage } from './database-outage.ts';
import { eventually } from './eventually.ts';
import type { HttpAnswer } from './http-call.ts';

/** An answer as the drill judges it: its status, its Retry-After header and its parsed body. */
export interface DrillAnswer {
  status: number;
  retryAfter: string | undefined;
  body: unknown;
}

/** An `httpCall` answer as the drill judges it. */
export function drillAnswer(answer: HttpAnswer): DrillAnswer {
  return { status: answer.status, retryAfter: answer.headers.get('retry-after') ?? undefined, body: answer.json };
}

/** An `app.inject` answer as the drill judges it. */
export function injectedAnswer(response: { statusCode: number; headers: Record<string, unknown>; json(): unknown }): DrillAnswer {
  const retryAfter = response.headers['retry-after'];
  return { status: response.statusCode, retryAfter: retryAfter === undefined ? undefined : String(retryAfter), body: response.json() };
}

export interface OutageDrill<Ack> {
  /** One call as a user makes it (the `n`-th); `ack` is what a successful one made, for the test to find afterwards. */
  call: (n: number) => Promise<{ answer: DrillAnswer; ack?: Ack }>;
  outage: DatabaseOutage;
  /** Whether a refusal's body says it may be retried; the kit envelope's `error.retryable` by default. */
  retryable?: (body: unknown) => boolean;
  /** Callers keeping a call in flight each (a little load): 4 by default. */
  concurrency?: number;
  /** Checked after every answer (the service's process is still alive, say); a message when it is not. */
  alive?: () => string | undefined;
}

export interface DrillResult<Ack> {
  /** Every call answered with success, before, during and after the outage. */
  acknowledged: Ack[];
  /** Calls refused with 503, retryable and Retry-After, while the database was away. */
  deferred: number;
}

const kitRetryable = (body: unknown) => (body as { error?: { retryable?: unknown } } | undefined)?.error?.retryable === true;

/**
 * Drives calls at a service while its database goes away and comes back, and fails on any answer that is neither a
 * success nor a deferral (503, retryable, with Retry-After): first until a few succeed, then through the outage
 * until a few are deferred (every backend terminated, new connections refused), then, the database back, until a
 * few succeed again. Nothing waits on time: each phase ends on what the answers say. The test then checks that
 * every acknowledged call's effect is there.
 *
 * @example const { acknowledged } = await driveThroughOutage({ outage, call: async (n) => ..., alive: () => ... })
 */
export async function driveThroughOutage<Ack>(drill: OutageDrill<Ack>): Promise<DrillResult<Ack>> {
  const retryable = drill.retryable ?? kitRetryable;
  const acknowledged: Ack[] = [];
  const wrong: string[] = [];
  let phase: 'before' | 'away' | 'back' = 'before';
  const seen = { before: 0, away: 0, back: 0 };
  let deferred = 0;
  let next = 0;
  let stopped = false;
  const lane = async () => {
    while (!stopped && wrong.length === 0) {
      const n = next++;
      const at = phase;
      let result: Awaited<ReturnType<OutageDrill<Ack>['call']>>;
      try {
        result = await drill.call(n);
      } catch (error) {
        wrong.push(`call ${n} (${at}) got no answer: ${drill.alive?.() ?? String(error)}`);
        return;
      }
      const { answer, ack } = result;
      const dead = drill.alive?.();
      if (dead) wrong.push(dead);
      else if (answer.status >= 200 && answer.status < 300) {
        if (ack !== undefined) acknowledged.push(ack);
        if (phase === at) seen[at]++;
      } else if (answer.status === 503 && answer.retryAfter !== undefined && retryable(answer.body)) {
        deferred++;
        if (phase === at && at === 'away') seen.away++;
        // A refusal comes back at once: give the event loop (and the service) a turn before the next call.
        await new Promise((resolve) => setTimeout(resolve, 1));
      } else wrong.push(`call ${n} (${at}) answered ${answer.status} retry-after=${answer.retryAfter} ${JSON.stringify(answer.body)}`);
    }
  };
  const lanes = Array.from({ length: drill.concurrency ?? 4 }, lane);
  const settled = () => wrong.length > 0;
  try {
    await eventually(() => settled() || seen.before >= 3, 'calls succeed before the outage');
    phase = 'away';
    await drill.outage.begin();
    // One caller more, whose calls all begin while the database is away: the others may be held in calls begun
    // before it (a write the service keeps trying), and the phase ends on deferrals, not on time.
    lanes.push(lane());
    await eventually(() => settled() || seen.away >= 3, 'calls are deferred while the database is away');
    phase = 'back';
    drill.outage.end();
    await eventually(() => settled() || seen.back >= 3, 'calls succeed again once the database is back');
  } finally {
    stopped = true;
    drill.outage.end();
    await Promise.all(lanes);
  }
  if (wrong.length > 0) throw new Error(`answers outside success and 503 retryable with Retry-After:\n${wrong.slice(0, 5).join('\n')}`);
  return { acknowledged, deferred };
}
