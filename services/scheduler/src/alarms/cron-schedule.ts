import { Cron } from 'croner';

/**
 * Cron expressions: exactly 5 fields (minute hour day-of-month month day-of-week) read in an IANA timezone.
 * Daylight-saving rules (croner's, which we test): a fixed time skipped in spring fires once at the first
 * valid instant after the gap (02:30 on a 02:00→03:00 night fires at 03:00); a fixed time repeated in autumn
 * fires once, at its first instance. Expressions with a wildcard or step in the hour field follow real time
 * and fire in both instances of a repeated hour.
 */
export type CronCheck = { ok: true; cron: Cron } | { ok: false; reason: string };

export function isValidTimezone(timezone: string): boolean {
  if (timezone === '' || timezone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Parses and validates an expression; refuses 6-field forms, nicknames (`@daily`) and expressions that never fire. */
export function parseCron(expression: string, timezone: string, from: Date): CronCheck {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || fields.some((field) => field.startsWith('@'))) {
    return { ok: false, reason: 'cron_expr must have exactly 5 fields: minute hour day-of-month month day-of-week' };
  }
  if (!isValidTimezone(timezone)) return { ok: false, reason: `timezone "${timezone}" is not a known IANA timezone` };
  let cron: Cron;
  try {
    cron = new Cron(fields.join(' '), { timezone, mode: '5-part', paused: true });
  } catch (error) {
    return { ok: false, reason: `cron_expr is invalid: ${(error as Error).message.replace(/^CronPattern: /, '')}` };
  }
  if (!cron.nextRun(from)) return { ok: false, reason: 'cron_expr never fires' };
  return { ok: true, cron };
}

/** The first occurrence strictly after `after`, or undefined when the expression has none left. */
export function nextOccurrence(expression: string, timezone: string, after: Date): Date | undefined {
  const cron = new Cron(expression, { timezone, mode: '5-part', paused: true });
  return cron.nextRun(after) ?? undefined;
}
