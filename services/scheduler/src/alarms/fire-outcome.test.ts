import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelayMs, backoffLadderMs, cronRetries, type FireOutcome, type FireResult, fireOutcome } from './fire-outcome.ts';

type FiringAlarm = Parameters<typeof fireOutcome>[0];

const second = 1000;
const minute = 60 * second;
const day = 24 * 60 * minute;
const ok: FireResult = { ok: true };
const boom: FireResult = { ok: false, error: 'wake target answered 503', reason: 'http_5xx' };

const at = (iso: string): Date => new Date(iso);
const plus = (date: Date, ms: number): Date => new Date(date.getTime() + ms);

function onceAlarm(fields: Partial<FiringAlarm> = {}): FiringAlarm {
  const slot = at('2026-01-05T09:00:00Z');
  return {
    id: 'alarm-once',
    kind: 'once',
    cron_expr: '',
    timezone: 'UTC',
    occurrence_at: slot,
    next_fire_at: slot,
    attempt: 1,
    failure_count: 0,
    max_failures: 5,
    last_fired_at: null,
    ...fields,
  };
}

function cronAlarm(cronExpr: string, slot: Date, fields: Partial<FiringAlarm> = {}): FiringAlarm {
  return {
    id: 'alarm-cron',
    kind: 'cron',
    cron_expr: cronExpr,
    timezone: 'UTC',
    occurrence_at: slot,
    next_fire_at: slot,
    attempt: 1,
    failure_count: 0,
    max_failures: 5,
    last_fired_at: null,
    ...fields,
  };
}

/** The alarm as the repository would store it after an outcome. */
function apply(alarm: FiringAlarm, outcome: FireOutcome): FiringAlarm {
  return {
    ...alarm,
    next_fire_at: outcome.next_fire_at,
    occurrence_at: outcome.occurrence_at,
    attempt: outcome.attempt,
    failure_count: outcome.failure_count,
    last_fired_at: outcome.last_fired_at,
  };
}

describe('backoff ladder', () => {
  it('waits 10 s, 30 s, 2 min, 10 min, 30 min for attempts 1 to 5', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map(backoffDelayMs), [10 * second, 30 * second, 2 * minute, 10 * minute, 30 * minute]);
    assert.deepEqual([...backoffLadderMs], [10 * second, 30 * second, 2 * minute, 10 * minute, 30 * minute]);
  });

  it('keeps waiting 30 min for any further attempt', () => {
    for (const attempt of [6, 7, 10, 100, 10_000]) assert.equal(backoffDelayMs(attempt), 30 * minute, `attempt ${attempt}`);
  });
});

describe('once alarm', () => {
  const slot = at('2026-01-05T09:00:00Z');

  it('is fired after a successful delivery, with last_fired_at = firedAt and the failure state cleared', () => {
    const alarm = onceAlarm({ attempt: 3, failure_count: 2 });
    const firedAt = at('2026-01-05T09:00:41Z');
    const outcome = fireOutcome(alarm, ok, firedAt, plus(firedAt, 250));
    assert.deepEqual(outcome, {
      id: 'alarm-once',
      status: 'fired',
      next_fire_at: slot,
      occurrence_at: slot,
      attempt: 1,
      failure_count: 0,
      last_error: '',
      last_fired_at: firedAt,
      fired: 1,
    });
  });

  it('walks the backoff ladder on consecutive failures, keeping the occurrence (and so the Idempotency-Key)', () => {
    let alarm = onceAlarm({ max_failures: 10 });
    let now = plus(slot, 2 * second);
    const expectedDelays = [10 * second, 30 * second, 2 * minute, 10 * minute, 30 * minute, 30 * minute, 30 * minute];
    expectedDelays.forEach((delay, index) => {
      const attempt = index + 1;
      assert.equal(alarm.attempt, attempt);
      const outcome = fireOutcome(alarm, boom, now, now);
      assert.equal(outcome.status, 'active', `attempt ${attempt}`);
      assert.equal(outcome.attempt, attempt + 1);
      assert.equal(outcome.failure_count, attempt);
      assert.deepEqual(outcome.next_fire_at, plus(now, delay), `attempt ${attempt}`);
      assert.deepEqual(outcome.occurrence_at, slot);
      assert.equal(outcome.last_error, 'wake target answered 503');
      assert.equal(outcome.last_fired_at, null);
      assert.equal(outcome.fired, 0);
      alarm = apply(alarm, outcome);
      now = plus(outcome.next_fire_at, 700);
    });
  });

  for (const maxFailures of [1, 2, 5]) {
    it(`becomes failed at the ${maxFailures}th consecutive failure when max_failures is ${maxFailures}`, () => {
      let alarm = onceAlarm({ max_failures: maxFailures });
      let now = plus(slot, second);
      for (let failure = 1; failure < maxFailures; failure++) {
        const outcome = fireOutcome(alarm, boom, now, now);
        assert.equal(outcome.status, 'active', `failure ${failure} of ${maxFailures}`);
        alarm = apply(alarm, outcome);
        now = plus(outcome.next_fire_at, 100);
      }
      const final = fireOutcome(alarm, boom, now, now);
      assert.equal(final.status, 'failed');
      assert.equal(final.failure_count, maxFailures);
      assert.deepEqual(final.occurrence_at, slot);
      assert.equal(final.fired, 0);
    });
  }

  it('keeps last_fired_at from an earlier success when a later attempt fails', () => {
    const earlier = at('2025-12-01T00:00:00Z');
    const outcome = fireOutcome(onceAlarm({ last_fired_at: earlier }), boom, slot, slot);
    assert.deepEqual(outcome.last_fired_at, earlier);
  });

  it('truncates last_error to 500 characters', () => {
    const long = `${'a'.repeat(499)}bc${'d'.repeat(300)}`;
    const outcome = fireOutcome(onceAlarm(), { ok: false, error: long, reason: 'http_5xx' }, slot, slot);
    assert.equal(outcome.last_error.length, 500);
    assert.equal(outcome.last_error, `${'a'.repeat(499)}b`);
  });

  it('keeps an error of exactly 500 characters whole', () => {
    const exact = 'e'.repeat(500);
    assert.equal(fireOutcome(onceAlarm(), { ok: false, error: exact, reason: 'http_5xx' }, slot, slot).last_error, exact);
  });
});

describe('cron alarm after a successful delivery', () => {
  const slot = at('2026-01-05T09:00:00Z');

  it('stays active and moves to the next slot, computed from the slot, not from the fire time', () => {
    const alarm = cronAlarm('0 9 * * *', slot, { attempt: 2, failure_count: 1 });
    const firedAt = at('2026-01-05T09:00:07.250Z');
    const outcome = fireOutcome(alarm, ok, firedAt, plus(firedAt, 100));
    const tomorrow = at('2026-01-06T09:00:00Z');
    assert.deepEqual(outcome, {
      id: 'alarm-cron',
      status: 'active',
      next_fire_at: tomorrow,
      occurrence_at: tomorrow,
      attempt: 1,
      failure_count: 0,
      last_error: '',
      last_fired_at: firedAt,
      fired: 1,
    });
  });

  it('does not fire the same slot twice when delivered slightly before the slot', () => {
    const early = plus(slot, -500);
    const outcome = fireOutcome(cronAlarm('0 9 * * *', slot), ok, early, early);
    assert.deepEqual(outcome.occurrence_at, at('2026-01-06T09:00:00Z'));
  });

  it('follows local time across a DST change (09:00 EST → 09:00 EDT is 23 hours later)', () => {
    const estSlot = at('2026-03-07T14:00:00Z');
    const alarm = cronAlarm('0 9 * * *', estSlot, { timezone: 'America/New_York' });
    const outcome = fireOutcome(alarm, ok, plus(estSlot, second), plus(estSlot, second));
    assert.deepEqual(outcome.next_fire_at, at('2026-03-08T13:00:00Z'));
  });

  it('does not fire the repeated hour again after fall back', () => {
    const firstInstance = at('2026-11-01T05:30:00Z');
    const alarm = cronAlarm('30 1 * * *', firstInstance, { timezone: 'America/New_York' });
    const outcome = fireOutcome(alarm, ok, plus(firstInstance, second), plus(firstInstance, second));
    assert.deepEqual(outcome.next_fire_at, at('2026-11-02T06:30:00Z'));
  });

  it('after downtime fires once for all missed slots and resumes at the first slot after now', () => {
    const now = plus(slot, 3 * day + 2 * 60 * minute); // 2026-01-08T11:00Z, three daily slots missed
    const outcome = fireOutcome(cronAlarm('0 9 * * *', slot), ok, now, now);
    assert.equal(outcome.fired, 1);
    assert.equal(outcome.status, 'active');
    assert.deepEqual(outcome.next_fire_at, at('2026-01-09T09:00:00Z'));
    assert.deepEqual(outcome.occurrence_at, at('2026-01-09T09:00:00Z'));
  });

  it('after downtime ending exactly on a slot resumes at the slot after it', () => {
    const now = plus(slot, 3 * day);
    const outcome = fireOutcome(cronAlarm('0 9 * * *', slot), ok, now, now);
    assert.deepEqual(outcome.next_fire_at, at('2026-01-09T09:00:00Z'));
  });
});

describe('cron alarm after a failed delivery', () => {
  const slot = at('2026-01-05T09:00:00Z');

  it(`retries a daily occurrence on the ladder at most ${cronRetries} times, then skips to the next day`, () => {
    let alarm = cronAlarm('0 9 * * *', slot);
    let now = plus(slot, second);
    const expectedDelays = [10 * second, 30 * second, 2 * minute];
    assert.equal(expectedDelays.length, cronRetries);
    expectedDelays.forEach((delay, index) => {
      const outcome = fireOutcome(alarm, boom, now, now);
      assert.equal(outcome.status, 'active');
      assert.equal(outcome.attempt, index + 2);
      assert.equal(outcome.failure_count, index + 1);
      assert.deepEqual(outcome.next_fire_at, plus(now, delay));
      assert.deepEqual(outcome.occurrence_at, slot, 'the occurrence (Idempotency-Key) is kept across retries');
      assert.equal(outcome.fired, 0);
      alarm = apply(alarm, outcome);
      now = plus(outcome.next_fire_at, 300);
    });
    const skipped = fireOutcome(alarm, boom, now, now);
    assert.equal(skipped.status, 'active');
    assert.equal(skipped.attempt, 1);
    assert.equal(skipped.failure_count, cronRetries + 1);
    assert.deepEqual(skipped.next_fire_at, at('2026-01-06T09:00:00Z'));
    assert.deepEqual(skipped.occurrence_at, at('2026-01-06T09:00:00Z'));
  });

  it('every-minute cron: retries at 10 s and 30 s, but skips to the next minute instead of a 2-minute retry', () => {
    const noon = at('2026-01-05T12:00:00Z');
    let alarm = cronAlarm('* * * * *', noon);

    const firstFailure = fireOutcome(alarm, boom, plus(noon, 1 * second), plus(noon, 1 * second));
    assert.equal(firstFailure.attempt, 2);
    assert.deepEqual(firstFailure.next_fire_at, at('2026-01-05T12:00:11Z'));
    assert.deepEqual(firstFailure.occurrence_at, noon);
    alarm = apply(alarm, firstFailure);

    const secondFailure = fireOutcome(alarm, boom, plus(noon, 12 * second), plus(noon, 12 * second));
    assert.equal(secondFailure.attempt, 3);
    assert.deepEqual(secondFailure.next_fire_at, at('2026-01-05T12:00:42Z'));
    assert.deepEqual(secondFailure.occurrence_at, noon);
    alarm = apply(alarm, secondFailure);

    const thirdFailure = fireOutcome(alarm, boom, plus(noon, 43 * second), plus(noon, 43 * second));
    assert.equal(thirdFailure.status, 'active');
    assert.equal(thirdFailure.attempt, 1);
    assert.equal(thirdFailure.failure_count, 3);
    assert.deepEqual(thirdFailure.next_fire_at, at('2026-01-05T12:01:00Z'));
    assert.deepEqual(thirdFailure.occurrence_at, at('2026-01-05T12:01:00Z'));
  });

  it('never schedules a retry exactly at the next occurrence', () => {
    const noon = at('2026-01-05T12:00:00Z');
    const now = plus(noon, 50 * second); // 10 s retry would land on 12:01:00, the next slot
    const outcome = fireOutcome(cronAlarm('* * * * *', noon), boom, now, now);
    assert.equal(outcome.attempt, 1);
    assert.deepEqual(outcome.occurrence_at, at('2026-01-05T12:01:00Z'));
  });

  it('does schedule a retry landing just before the next occurrence', () => {
    const noon = at('2026-01-05T12:00:00Z');
    const now = plus(noon, 50 * second - 1);
    const outcome = fireOutcome(cronAlarm('* * * * *', noon), boom, now, now);
    assert.equal(outcome.attempt, 2);
    assert.deepEqual(outcome.next_fire_at, at('2026-01-05T12:00:59.999Z'));
    assert.deepEqual(outcome.occurrence_at, noon);
  });

  it('failing after downtime skips past every missed slot to the first slot after now', () => {
    const now = plus(slot, 3 * day + 60 * minute);
    const outcome = fireOutcome(cronAlarm('0 9 * * *', slot), boom, now, now);
    assert.equal(outcome.status, 'active');
    assert.equal(outcome.attempt, 1);
    assert.deepEqual(outcome.occurrence_at, at('2026-01-09T09:00:00Z'));
  });

  it('counts consecutive failures across occurrences and resets the count on success', () => {
    const noon = at('2026-01-05T12:00:00Z');
    let alarm = cronAlarm('* * * * *', noon, { attempt: 3, failure_count: 2 });
    const skipped = fireOutcome(alarm, boom, plus(noon, 45 * second), plus(noon, 45 * second));
    assert.equal(skipped.failure_count, 3);
    assert.deepEqual(skipped.occurrence_at, at('2026-01-05T12:01:00Z'));
    alarm = apply(alarm, skipped);

    const nextSlotFailure = fireOutcome(alarm, boom, at('2026-01-05T12:01:01Z'), at('2026-01-05T12:01:01Z'));
    assert.equal(nextSlotFailure.failure_count, 4);
    assert.equal(nextSlotFailure.attempt, 2);
    alarm = apply(alarm, nextSlotFailure);

    const success = fireOutcome(alarm, ok, at('2026-01-05T12:01:12Z'), at('2026-01-05T12:01:12Z'));
    assert.equal(success.failure_count, 0);
    assert.equal(success.attempt, 1);
    assert.equal(success.last_error, '');
    assert.deepEqual(success.occurrence_at, at('2026-01-05T12:02:00Z'));
  });

  it('stays active however many consecutive failures it has (max_failures applies to once alarms)', () => {
    const alarm = cronAlarm('0 9 * * *', slot, { attempt: cronRetries + 1, failure_count: 40, max_failures: 2 });
    const outcome = fireOutcome(alarm, boom, plus(slot, 5 * minute), plus(slot, 5 * minute));
    assert.equal(outcome.status, 'active');
    assert.equal(outcome.failure_count, 41);
  });

  it('truncates last_error to 500 characters', () => {
    const outcome = fireOutcome(cronAlarm('0 9 * * *', slot), { ok: false, error: 'z'.repeat(2000), reason: 'http_5xx' }, slot, slot);
    assert.equal(outcome.last_error, 'z'.repeat(500));
  });
});
