import type { AgentKey } from './agent-key-type.ts';
import { ServiceSession } from './service-session.ts';

export interface AlarmView {
  id: string;
  label: string;
  kind: 'once' | 'cron';
  cron_expr: string;
  timezone: string;
  next_fire_at: string;
  conversation_id: string;
  wake_message: string;
  payload: Record<string, unknown>;
  status: 'active' | 'fired' | 'cancelled' | 'failed';
  idempotency_key: string;
  max_failures: number;
  failure_count: number;
  last_error: string;
  created_at: string;
  last_fired_at: string | null;
}

export interface CreateAlarm {
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

/**
 * The scheduler, for an agent: alarms scoped to the agent's DID.
 *
 * @example const scheduler = new SchedulerClient({ baseUrl: 'http://127.0.0.1:9096', transportToken, key })
 */
export class SchedulerClient {
  readonly session: ServiceSession;

  constructor(options: { baseUrl: string; transportToken?: string; key: AgentKey; fetch?: typeof fetch }) {
    this.session = new ServiceSession({ ...options, service: 'scheduler', principalHeader: 'X-Scheduler-Agent' });
  }
  createAlarm(alarm: CreateAlarm): Promise<{ id: string; next_fire_at: string; status: AlarmView['status'] }> {
    return this.session.request('POST', '/v1/alarms', alarm);
  }
  listAlarms(limit?: number): Promise<{ alarms: AlarmView[]; count: number }> {
    return this.session.request('GET', `/v1/alarms${limit === undefined ? '' : `?limit=${limit}`}`);
  }
  getAlarm(id: string): Promise<AlarmView> {
    return this.session.request('GET', `/v1/alarms/${encodeURIComponent(id)}`);
  }
  cancelAlarm(id: string): Promise<AlarmView> {
    return this.session.request('DELETE', `/v1/alarms/${encodeURIComponent(id)}`);
  }
}
