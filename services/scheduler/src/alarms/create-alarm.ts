import type { PrincipalClaims } from '@platform/kit/auth/principal-token';
import { canonicalHash } from '@platform/kit/canonical-json';
import type { Clock } from '@platform/kit/clock';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import { uuidv7 } from '@platform/kit/ids';
import type { AlarmRow } from '../db/schema.ts';
import type { CheckWakeable } from '../dispatch/wake-check.ts';
import type { AlarmsRepository } from './alarms.repository.ts';
import { isValidTimezone, parseCron } from './cron-schedule.ts';
import { alarmLimits } from './limits.ts';

export interface CreateAlarmRequest {
  kind: 'once' | 'cron';
  wake_message: string;
  delay_seconds?: number;
  fire_at?: string;
  cron_expr?: string;
  timezone?: string;
  label?: string;
  conversation_id?: string;
  payload?: Record<string, unknown>;
  idempotency_key?: string;
  max_failures?: number;
}

// ISO 8601 with a date, a time and an explicit offset: a time without one would be read in the server's zone.
const isoWithOffset = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Parses fire_at strictly: `new Date` alone would roll 2026-02-30 over to March 2. */
function parseFireAt(text: string): Date | undefined {
  const match = isoWithOffset.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return undefined;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Checks the rules the body schema cannot express and returns the request with defaults applied. */
function normalise(
  request: CreateAlarmRequest,
  now: Date,
): Required<Omit<CreateAlarmRequest, 'delay_seconds' | 'fire_at'>> & { fireAt: Date | { delaySeconds: number } } {
  if (request.wake_message.trim() === '') throw invalidRequest('wake_message must not be empty');
  const payloadBytes = Buffer.byteLength(JSON.stringify(request.payload ?? {}), 'utf8');
  if (payloadBytes > alarmLimits.payloadBytes) throw invalidRequest(`payload must be at most ${alarmLimits.payloadBytes} bytes of JSON, got ${payloadBytes}`);
  const timezone = request.timezone ?? 'UTC';
  if (!isValidTimezone(timezone)) throw invalidRequest(`timezone "${timezone}" is not a known IANA timezone`);
  const common = {
    kind: request.kind,
    wake_message: request.wake_message,
    timezone,
    label: request.label ?? '',
    conversation_id: request.conversation_id ?? '',
    payload: request.payload ?? {},
    idempotency_key: request.idempotency_key ?? '',
    max_failures: request.max_failures ?? alarmLimits.defaultMaxFailures,
  };
  if (request.kind === 'cron') {
    if (request.delay_seconds !== undefined || request.fire_at !== undefined)
      throw invalidRequest('a cron alarm takes cron_expr, not delay_seconds or fire_at');
    if (request.cron_expr === undefined || request.cron_expr.trim() === '') throw invalidRequest('cron_expr is required for a cron alarm');
    const cron_expr = request.cron_expr.trim().split(/\s+/).join(' ');
    const check = parseCron(cron_expr, timezone, now);
    if (!check.ok) throw invalidRequest(check.reason);
    const first = check.cron.nextRun(now) as Date;
    return { ...common, cron_expr, fireAt: first };
  }
  if (request.cron_expr !== undefined) throw invalidRequest('a once alarm takes delay_seconds or fire_at, not cron_expr');
  if ((request.delay_seconds === undefined) === (request.fire_at === undefined))
    throw invalidRequest('a once alarm needs exactly one of delay_seconds or fire_at');
  if (request.delay_seconds !== undefined) return { ...common, cron_expr: '', fireAt: { delaySeconds: request.delay_seconds } };
  const fireAt = parseFireAt(request.fire_at as string);
  if (!fireAt) throw invalidRequest('fire_at must be an ISO 8601 time with an offset, e.g. 2026-11-21T09:00:00Z');
  if (fireAt.getTime() - now.getTime() > alarmLimits.horizonSeconds * 1000) throw invalidRequest('fire_at is more than 10 years ahead');
  // A time in the past fires at once; one further back than the horizon is a mistake (and year 0 is no time PostgreSQL holds).
  if (now.getTime() - fireAt.getTime() > alarmLimits.horizonSeconds * 1000) throw invalidRequest('fire_at is more than 10 years ago');
  return { ...common, cron_expr: '', fireAt };
}

/**
 * Creates an alarm for the principal, or returns the one its idempotency key already names. The key
 * is scoped to the owner DID; reusing it with different parameters is a client mistake (409). The
 * comparison hashes the request as sent (a `delay_seconds` replay matches even though "now" moved). With
 * `checkWakeable`, an alarm whose wakes the receiver would refuse is refused before it is written.
 */
export async function createAlarm(
  repository: AlarmsRepository,
  clock: Clock,
  principal: PrincipalClaims,
  request: CreateAlarmRequest,
  checkWakeable?: CheckWakeable,
): Promise<AlarmRow> {
  // A cron alarm's first occurrence is reckoned by the clock due-ness is judged by, so a skewed instance cannot skip or repeat it.
  const alarm = normalise(request, request.kind === 'cron' ? await repository.databaseNow() : clock.now());
  // After the body's own checks (a malformed alarm wakes nobody to ask), before anything is written.
  await checkWakeable?.(principal, request);
  const { fireAt, ...fields } = alarm;
  const request_hash = canonicalHash({
    ...fields,
    delay_seconds: request.delay_seconds ?? null,
    fire_at: fireAt instanceof Date && request.fire_at ? fireAt.toISOString() : null,
  });
  const { row, created } = await repository.insertOrGetExisting({
    ...fields,
    id: uuidv7(clock.now().getTime()),
    owner_did: principal.did,
    owner_user_id: principal.owner,
    payload: JSON.stringify(fields.payload),
    fireAt,
    status: 'active',
    request_hash,
    failure_count: 0,
    attempt: 1,
    last_error: '',
    last_fired_at: null,
    claim_token: null,
    claimed_until: null,
  });
  if (!created && row.request_hash !== request_hash) {
    throw new ServiceError('conflict', 'idempotency_key was already used for an alarm with different parameters', { details: { alarm_id: row.id } });
  }
  return row;
}
