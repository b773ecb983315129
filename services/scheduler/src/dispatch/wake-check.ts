import type { PrincipalClaims } from '@platform/kit/auth/principal-token';
import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { uuidv7 } from '@platform/kit/ids';
import { tracedFetch } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import type { WakeBody } from './wake-delivery.ts';

/** Throws 403 `wake_refused` when the wake receiver says alarms of this DID cannot wake its agent. */
export type CheckWakeable = (principal: PrincipalClaims, alarm: { wake_message: string; label?: string; conversation_id?: string }) => Promise<void>;

/** Answers that say the wake would never be taken: the agent refuses this DID, no such user, an account closed. */
const refusals = new Set([403, 404, 410, 451]);
/** A DID found wakeable is not asked about again for this long (a daemon making alarms in a row). */
const rememberedMs = 60_000;
const rememberedLimit = 10_000;

/**
 * The check an alarm is given when it is made (SCHEDULER_WAKE_CHECK): the wake receiver is sent the wake the alarm
 * would send, with `check: true` and no alarm id, and answers as it would answer the wake, taking nothing (the router
 * hands it to the user's daemon, which accepts its own DID and the keys its user linked). A refusal refuses the alarm
 * at once, instead of an alarm accepted as `active` whose every wake is refused until it fails. Anything that does not
 * say (no answer in SCHEDULER_WAKE_TIMEOUT_MS, a 5xx, a receiver that does not know the check) lets the alarm be
 * made, with a warning in the log: the wake itself will be retried as any wake is.
 */
export function httpWakeCheck(options: { url: string; token: string; timeoutMs: number; clock: Clock; logger: Logger }): CheckWakeable {
  const wakeable = new Map<string, number>();
  return async (principal, alarm) => {
    const now = options.clock.now().getTime();
    if ((wakeable.get(principal.did) ?? 0) > now) return;
    const body: WakeBody & { check: true } = {
      user_id: principal.owner,
      did: principal.did,
      alarm_id: '',
      label: alarm.label ?? '',
      wake_message: alarm.wake_message,
      conversation_id: alarm.conversation_id ?? '',
      payload: {},
      scheduled_for: '',
      fired_at: '',
      attempt: 0,
      check: true,
    };
    const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': `check:${uuidv7()}` };
    if (options.token !== '') headers.authorization = `Bearer ${options.token}`;
    let answer: { status: number; message: string };
    try {
      const response = await tracedFetch(options.url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(options.timeoutMs) });
      answer = { status: response.status, message: failureMessage(await response.text()) };
    } catch (error) {
      options.logger.warn({ did: principal.did, err: error }, 'could not check that the alarm’s agent takes its wakes; made it anyway');
      return;
    }
    if (answer.status >= 200 && answer.status < 300) {
      if (wakeable.size >= rememberedLimit) wakeable.clear();
      wakeable.set(principal.did, now + rememberedMs);
      return;
    }
    if (!refusals.has(answer.status)) {
      options.logger.warn({ did: principal.did, status: answer.status, reason: answer.message }, 'the wake check did not say; made the alarm anyway');
      return;
    }
    throw new ServiceError(
      'forbidden',
      `an alarm made by ${principal.did} could not wake its agent: the wake receiver answered ${answer.status}${answer.message ? ` (${answer.message})` : ''}`,
      { details: { reason: 'wake_refused' } },
    );
  };
}

/** The refusal's message from the service envelope the answer is in, else nothing. */
function failureMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' ? message.slice(0, 300) : '';
  } catch {
    return '';
  }
}
