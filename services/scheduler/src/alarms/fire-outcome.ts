import type { AlarmRow, AlarmStatus } from '../db/schema.ts';
import { nextOccurrence } from './cron-schedule.ts';

/**
 * The backoff ladder between attempts of one occurrence: 10 s, 30 s, 2 min, 10 min, 30 min,
 * then 30 min for any further attempt. A `once` alarm walks it until `max_failures` consecutive
 * failures make it `failed`. A `cron` alarm retries an occurrence at most `cronRetries` times and
 * never into the next occurrence; then it skips to the next occurrence and stays `active`.
 */
export const backoffLadderMs = [10_000, 30_000, 120_000, 600_000, 1_800_000] as const;
export const cronRetries = 3;
const lastErrorLength = 500;

/** Why a wake was not delivered, as a closed set (the metrics' `reason`): `error` is a delivery function that threw. */
export type WakeFailureReason = 'timeout' | 'unreachable' | 'http_4xx' | 'http_5xx' | 'http_other' | 'error';
export const wakeFailureReasons: readonly WakeFailureReason[] = ['timeout', 'unreachable', 'http_4xx', 'http_5xx', 'http_other', 'error'];

export type FireResult = { ok: true } | { ok: false; error: string; reason: WakeFailureReason };

/** What one fire came to (the metrics' `outcome`): delivered, or failed and then retried, given up (`failed`) or skipped. */
export type FireVerdict = 'delivered' | 'retrying' | 'failed' | 'skipped';
export const fireVerdicts: readonly FireVerdict[] = ['delivered', 'retrying', 'failed', 'skipped'];

/** A failed fire's verdict from its outcome: the same occurrence again later, the alarm failed, or the occurrence left behind. */
export function failedFireVerdict(alarm: Pick<FiringAlarm, 'occurrence_at'>, outcome: FireOutcome): FireVerdict {
  if (outcome.status === 'failed') return 'failed';
  return outcome.status === 'active' && outcome.occurrence_at.getTime() === alarm.occurrence_at.getTime() ? 'retrying' : 'skipped';
}

/** The alarm's state after one delivery attempt; `fired` counts successful deliveries. */
export interface FireOutcome {
  id: string;
  status: AlarmStatus;
  next_fire_at: Date;
  occurrence_at: Date;
  attempt: number;
  failure_count: number;
  last_error: string;
  last_fired_at: Date | null;
  fired: number;
}

export function backoffDelayMs(attempt: number): number {
  return backoffLadderMs[Math.min(attempt, backoffLadderMs.length) - 1] as number;
}

type FiringAlarm = Pick<
  AlarmRow,
  'id' | 'kind' | 'cron_expr' | 'timezone' | 'occurrence_at' | 'attempt' | 'failure_count' | 'max_failures' | 'last_fired_at' | 'next_fire_at'
>;

/**
 * Computes the next state. Occurrences advance from the scheduled slot, never from the moment of the fire,
 * and past `now` in one step: after downtime a cron alarm fires once for all the missed slots, then resumes.
 */
export function fireOutcome(alarm: FiringAlarm, result: FireResult, firedAt: Date, now: Date): FireOutcome {
  const base = { id: alarm.id, last_fired_at: alarm.last_fired_at, fired: 0 };
  if (result.ok) {
    const fired = { ...base, attempt: 1, failure_count: 0, last_error: '', last_fired_at: firedAt, fired: 1 };
    if (alarm.kind === 'once') return { ...fired, status: 'fired', next_fire_at: alarm.next_fire_at, occurrence_at: alarm.occurrence_at };
    return advanceCron(alarm, fired, now);
  }
  const failed = { ...base, failure_count: alarm.failure_count + 1, last_error: result.error.slice(0, lastErrorLength) };
  const retryAt = new Date(now.getTime() + backoffDelayMs(alarm.attempt));
  if (alarm.kind === 'once') {
    if (failed.failure_count >= alarm.max_failures) {
      return { ...failed, status: 'failed', attempt: alarm.attempt, next_fire_at: alarm.next_fire_at, occurrence_at: alarm.occurrence_at };
    }
    return { ...failed, status: 'active', attempt: alarm.attempt + 1, next_fire_at: retryAt, occurrence_at: alarm.occurrence_at };
  }
  const following = nextOccurrence(alarm.cron_expr, alarm.timezone, alarm.occurrence_at);
  if (alarm.attempt <= cronRetries && following !== undefined && retryAt < following) {
    return { ...failed, status: 'active', attempt: alarm.attempt + 1, next_fire_at: retryAt, occurrence_at: alarm.occurrence_at };
  }
  return advanceCron(alarm, { ...failed, attempt: 1 }, now);
}

function advanceCron<T extends Omit<FireOutcome, 'status' | 'next_fire_at' | 'occurrence_at'>>(alarm: FiringAlarm, state: T, now: Date): FireOutcome {
  const from = alarm.occurrence_at > now ? alarm.occurrence_at : now;
  const next = nextOccurrence(alarm.cron_expr, alarm.timezone, from);
  // An expression with no occurrence left (a date that has passed) ends the series as fired.
  if (!next) return { ...state, status: 'fired', next_fire_at: alarm.next_fire_at, occurrence_at: alarm.occurrence_at };
  return { ...state, status: 'active', next_fire_at: next, occurrence_at: next };
}
