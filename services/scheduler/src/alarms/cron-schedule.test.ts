import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidTimezone, nextOccurrence, parseCron } from './cron-schedule.ts';

const newYork = 'America/New_York';
const berlin = 'Europe/Berlin';

/** Every occurrence in [from, until), as ISO strings, walking nextOccurrence one step at a time. */
function occurrencesBetween(expression: string, timezone: string, from: string, until: string): string[] {
  const end = new Date(until);
  const out: string[] = [];
  let cursor = new Date(from);
  for (;;) {
    const next = nextOccurrence(expression, timezone, cursor);
    if (!next || next >= end) return out;
    out.push(next.toISOString());
    cursor = next;
    if (out.length > 10_000) throw new Error('runaway walk');
  }
}

function next(expression: string, timezone: string, after: string): string | undefined {
  return nextOccurrence(expression, timezone, new Date(after))?.toISOString();
}

describe('cron in America/New_York across spring forward (2026-03-08, 02:00 → 03:00)', () => {
  it('fires a skipped 02:30 at 03:00 EDT, the first valid instant after the gap', () => {
    assert.equal(next('30 2 * * *', newYork, '2026-03-07T12:00:00Z'), '2026-03-08T07:00:00.000Z');
  });

  it('fires exactly once on the spring-forward day, then at 02:30 EDT the next day', () => {
    // Local 2026-03-08 00:00 EST = 05:00Z; local 2026-03-09 00:00 EDT = 04:00Z.
    assert.deepEqual(occurrencesBetween('30 2 * * *', newYork, '2026-03-08T05:00:00Z', '2026-03-09T04:00:00Z'), ['2026-03-08T07:00:00.000Z']);
    assert.equal(next('30 2 * * *', newYork, '2026-03-08T07:00:00Z'), '2026-03-09T06:30:00.000Z');
  });

  it('fires at 02:30 EST (07:30Z) the night before the change', () => {
    assert.equal(next('30 2 * * *', newYork, '2026-03-06T12:00:00Z'), '2026-03-07T07:30:00.000Z');
  });

  it('keeps fixed times outside the gap on their local wall-clock time', () => {
    // 01:30 EST on the change day, 03:30 EDT on the change day.
    assert.equal(next('30 1 * * *', newYork, '2026-03-07T12:00:00Z'), '2026-03-08T06:30:00.000Z');
    assert.equal(next('30 3 * * *', newYork, '2026-03-07T12:00:00Z'), '2026-03-08T07:30:00.000Z');
  });
});

describe('cron in America/New_York across fall back (2026-11-01, 01:00-02:00 repeated)', () => {
  it('fires a repeated 01:30 at its first instance (01:30 EDT = 05:30Z)', () => {
    assert.equal(next('30 1 * * *', newYork, '2026-10-31T12:00:00Z'), '2026-11-01T05:30:00.000Z');
  });

  it('does not fire a second time at the second instance (01:30 EST = 06:30Z)', () => {
    // Walk the whole local day: 2026-11-01 00:00 EDT = 04:00Z to 2026-11-02 00:00 EST = 05:00Z.
    assert.deepEqual(occurrencesBetween('30 1 * * *', newYork, '2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z'), ['2026-11-01T05:30:00.000Z']);
    assert.equal(next('30 1 * * *', newYork, '2026-11-01T05:30:00Z'), '2026-11-02T06:30:00.000Z');
  });

  it('asked from inside the repeated hour (after the first 01:30) goes to the next day', () => {
    assert.equal(next('30 1 * * *', newYork, '2026-11-01T06:00:00Z'), '2026-11-02T06:30:00.000Z');
  });
});

describe('cron in Europe/Berlin across daylight-saving changes', () => {
  it('spring 2026-03-29: a skipped 02:30 fires at 03:00 CEST (01:00Z), then 02:30 CEST the next day', () => {
    assert.equal(next('30 2 * * *', berlin, '2026-03-28T12:00:00Z'), '2026-03-29T01:00:00.000Z');
    assert.equal(next('30 2 * * *', berlin, '2026-03-29T01:00:00Z'), '2026-03-30T00:30:00.000Z');
    // Local day 2026-03-29: 00:00 CET = 2026-03-28T23:00Z to 00:00 CEST = 2026-03-29T22:00Z.
    assert.deepEqual(occurrencesBetween('30 2 * * *', berlin, '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z'), ['2026-03-29T01:00:00.000Z']);
  });

  it('fall 2026-10-25: a repeated 02:30 fires once at its first instance (00:30Z), then 02:30 CET the next day', () => {
    assert.equal(next('30 2 * * *', berlin, '2026-10-24T12:00:00Z'), '2026-10-25T00:30:00.000Z');
    assert.equal(next('30 2 * * *', berlin, '2026-10-25T00:30:00Z'), '2026-10-26T01:30:00.000Z');
    // Local day 2026-10-25: 00:00 CEST = 2026-10-24T22:00Z to 00:00 CET = 2026-10-25T23:00Z.
    assert.deepEqual(occurrencesBetween('30 2 * * *', berlin, '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z'), ['2026-10-25T00:30:00.000Z']);
  });

  it('*/30 follows real time through the repeated hour: every 30 real minutes, both instances included', () => {
    const fires = occurrencesBetween('*/30 * * * *', berlin, '2026-10-24T23:59:00Z', '2026-10-25T03:01:00Z');
    assert.deepEqual(fires, [
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T01:00:00.000Z', // 02:00 CET (repeated)
      '2026-10-25T01:30:00.000Z', // 02:30 CET (repeated)
      '2026-10-25T02:00:00.000Z', // 03:00 CET
      '2026-10-25T02:30:00.000Z',
      '2026-10-25T03:00:00.000Z',
    ]);
  });

  it('*/30 keeps a 30-minute spacing across the spring gap too', () => {
    const fires = occurrencesBetween('*/30 * * * *', berlin, '2026-03-29T00:00:00Z', '2026-03-29T02:01:00Z');
    assert.deepEqual(fires, ['2026-03-29T00:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-29T02:00:00.000Z']);
  });
});

describe('weekday cron 0 9 * * 1-5 in America/New_York', () => {
  it('fires on weekdays only and honours the offset change (14:00Z in winter, 13:00Z in summer)', () => {
    // Thursday 2026-03-05 through Thursday 2026-03-12; DST starts Sunday 2026-03-08.
    assert.deepEqual(occurrencesBetween('0 9 * * 1-5', newYork, '2026-03-05T00:00:00Z', '2026-03-13T00:00:00Z'), [
      '2026-03-05T14:00:00.000Z', // Thu, EST
      '2026-03-06T14:00:00.000Z', // Fri, EST
      '2026-03-09T13:00:00.000Z', // Mon, EDT
      '2026-03-10T13:00:00.000Z',
      '2026-03-11T13:00:00.000Z',
      '2026-03-12T13:00:00.000Z',
    ]);
  });

  it('goes back to 14:00Z after fall back and skips the weekend', () => {
    // Friday 2026-10-30 (EDT) then Monday 2026-11-02 (EST).
    assert.deepEqual(occurrencesBetween('0 9 * * 1-5', newYork, '2026-10-30T00:00:00Z', '2026-11-03T00:00:00Z'), [
      '2026-10-30T13:00:00.000Z',
      '2026-11-02T14:00:00.000Z',
    ]);
  });
});

describe('nextOccurrence is strictly after the given instant', () => {
  it('returns the following occurrence for an instant exactly on an occurrence', () => {
    assert.equal(next('0 * * * *', 'UTC', '2026-01-01T10:00:00.000Z'), '2026-01-01T11:00:00.000Z');
    assert.equal(next('0 9 * * *', newYork, '2026-01-05T14:00:00.000Z'), '2026-01-06T14:00:00.000Z');
  });

  it('returns the occurrence itself for an instant one millisecond before it', () => {
    assert.equal(next('0 * * * *', 'UTC', '2026-01-01T10:59:59.999Z'), '2026-01-01T11:00:00.000Z');
  });

  it('returns the next occurrence for an instant one millisecond after one', () => {
    assert.equal(next('0 * * * *', 'UTC', '2026-01-01T10:00:00.001Z'), '2026-01-01T11:00:00.000Z');
  });
});

describe('parseCron', () => {
  const from = new Date('2026-01-01T00:00:00Z');

  it('accepts a 5-field expression in a known timezone and returns a usable schedule', () => {
    const check = parseCron('0 9 * * 1-5', newYork, from);
    assert.equal(check.ok, true);
    assert.ok(check.ok);
    assert.equal(check.cron.nextRun(from)?.toISOString(), '2026-01-01T14:00:00.000Z');
  });

  it('tolerates surrounding and repeated whitespace', () => {
    assert.equal(parseCron('  0   9 * *  1-5 ', 'UTC', from).ok, true);
  });

  const refused: Array<[string, string, string, RegExp]> = [
    ['6 fields (seconds)', '0 * * * * *', 'UTC', /exactly 5 fields/],
    ['4 fields', '* * * *', 'UTC', /exactly 5 fields/],
    ['a nickname (@daily)', '@daily', 'UTC', /exactly 5 fields/],
    ['a nickname hidden in 5 fields', '@hourly * * * *', 'UTC', /exactly 5 fields/],
    ['the empty string', '', 'UTC', /exactly 5 fields/],
    ['minute 61', '61 * * * *', 'UTC', /^cron_expr is invalid: .+/],
    ['day-of-month 32', '* * 32 * *', 'UTC', /^cron_expr is invalid: .+/],
    ['garbage words', 'every day at nine am', 'UTC', /^cron_expr is invalid: .+/],
    ['one garbage word', 'garbage', 'UTC', /exactly 5 fields/],
    ['an unknown timezone', '0 9 * * *', 'Mars/Base', /timezone "Mars\/Base" is not a known IANA timezone/],
    ['an expression that never fires (30 February)', '0 0 30 2 *', 'UTC', /^cron_expr never fires$/],
  ];
  for (const [name, expression, timezone, reason] of refused) {
    it(`refuses ${name} with a reason`, () => {
      const check = parseCron(expression, timezone, from);
      assert.equal(check.ok, false);
      assert.ok(!check.ok);
      assert.match(check.reason, reason);
    });
  }
});

describe('isValidTimezone', () => {
  for (const timezone of ['UTC', berlin, newYork]) {
    it(`accepts ${timezone}`, () => {
      assert.equal(isValidTimezone(timezone), true);
    });
  }

  it('rejects the empty string', () => {
    assert.equal(isValidTimezone(''), false);
  });

  it('rejects an unknown zone name', () => {
    assert.equal(isValidTimezone('Not/AZone'), false);
  });

  it('rejects a 65-character string', () => {
    assert.equal(isValidTimezone('A'.repeat(65)), false);
  });
});
