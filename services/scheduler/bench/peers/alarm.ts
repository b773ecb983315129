import { randomUUID } from 'node:crypto';
import { postWake } from '../wake-client.ts';

/** What a queue job carries: everything in the wake body except the fire-time fields. */
export interface Alarm {
  user_id: string;
  alarm_id: string;
  label: string;
  wake_message: string;
  conversation_id: string;
  payload: { source: string; seq: number };
  /** Epoch ms the alarm is due; the sink measures lateness against it. */
  scheduled_for: number;
}

export interface WakeBody extends Alarm {
  fired_at: number;
  attempt: number;
}

/** Job i is due at dueAt + i * spreadMs / count, so spreadMs = 0 makes every job due at once. */
export function planAlarms(count: number, spreadMs: number, dueAt: number): Alarm[] {
  const alarms: Alarm[] = [];
  for (let i = 0; i < count; i++) {
    alarms.push({
      user_id: `user_${String(i % 997).padStart(6, '0')}`,
      alarm_id: randomUUID(),
      label: `Stand-up #${i}`,
      // Realistic length: with the rest the wake body is ~300 bytes of JSON.
      wake_message: 'Stand-up: what changed, what is blocked?',
      conversation_id: randomUUID(),
      payload: { source: 'bench', seq: i },
      scheduled_for: Math.round(dueAt + (spreadMs > 0 ? (i * spreadMs) / count : 0)),
    });
  }
  return alarms;
}

/** Same key shape as the scheduler: stable across retries, so the sink can count duplicates. */
export const idempotencyKey = (alarm: Alarm): string => `${alarm.alarm_id}:${alarm.scheduled_for}`;

/** The one wake POST every peer does per job; rejects unless the sink answered 2xx. */
export function fireAlarm(sinkUrl: string, sinkToken: string, alarm: Alarm, attempt: number): Promise<void> {
  const body: WakeBody = { ...alarm, fired_at: Date.now(), attempt };
  return postWake(sinkUrl, sinkToken, body, idempotencyKey(alarm));
}
