import type { NonceSchema } from '@platform/kit/auth/nonce-store';
import type { ColumnType, Generated, Selectable } from 'kysely';

export type AlarmKind = 'once' | 'cron';
export type AlarmStatus = 'active' | 'fired' | 'cancelled' | 'failed';

export interface AlarmTable {
  id: string;
  owner_did: string;
  /** The wake target's user id, from the principal token's owner claim. */
  owner_user_id: string;
  label: string;
  kind: AlarmKind;
  cron_expr: string;
  timezone: string;
  /** When the next attempt is due (a retry moves it; the occurrence stays). */
  next_fire_at: Date;
  /** The scheduled slot being delivered: `scheduled_for` on the wire and half the Idempotency-Key. */
  occurrence_at: Date;
  conversation_id: string;
  wake_message: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  status: AlarmStatus;
  idempotency_key: string;
  /** SHA-256 of the canonical create request, to tell an idempotent replay from a key clash. */
  request_hash: string;
  max_failures: number;
  failure_count: number;
  /** Attempt number within the current occurrence, starting at 1. */
  attempt: number;
  last_error: string;
  created_at: Date;
  last_fired_at: Date | null;
  /** Successful deliveries over the alarm's life. */
  fire_count: Generated<number>;
  /** The dispatcher instance holding the alarm, and until when (a lease: a crashed instance's claims expire). */
  claim_token: string | null;
  claimed_until: Date | null;
}

export interface SchedulerSchema extends NonceSchema {
  alarms: AlarmTable;
}

export type AlarmRow = Selectable<AlarmTable>;
