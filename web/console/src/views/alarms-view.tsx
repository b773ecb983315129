import type { AlarmView } from '@platform/client/scheduler-client';
import { useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { useAction, useData } from '../api/use-data.ts';
import { Alert } from '../components/alert.tsx';
import { DataTable } from '../components/data-table.tsx';

type Alarm = AlarmView;

type When = 'in' | 'at' | 'cron';

/** The agent's alarms on the scheduler (through the daemon, as its agent): list, create, cancel. */
export function AlarmsView() {
  const alarms = useData<{ alarms: Alarm[] }>('/alarms?limit=100');
  const [message, setMessage] = useState('');
  const [when, setWhen] = useState<When>('in');
  const [minutes, setMinutes] = useState('10');
  const [at, setAt] = useState('');
  const [cron, setCron] = useState('0 9 * * 1-5');
  const [busy, setBusy] = useState(false);
  const { error, run } = useAction();

  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const schedule =
      when === 'in'
        ? { delay_seconds: Math.round(Number(minutes) * 60) }
        : when === 'at'
          ? { fire_at: new Date(at).toISOString() }
          : { cron_expr: cron, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone };
    const created = await run(() => api('/alarms', { method: 'POST', body: { wake_message: message, ...schedule, idempotency_key: crypto.randomUUID() } }));
    setBusy(false);
    if (created) {
      setMessage('');
      alarms.reload();
    }
  };

  const cancel = async (alarm: Alarm) => {
    if (await run(() => api(`/alarms/${alarm.id}`, { method: 'DELETE' }))) alarms.reload();
  };

  return (
    <div class="alarms">
      <section class="panel" aria-labelledby="new-alarm">
        <h2 id="new-alarm">New alarm</h2>
        <form class="row" onSubmit={create}>
          <label>
            Wake your agent with
            <input required maxLength={16384} value={message} onInput={(event) => setMessage((event.target as HTMLInputElement).value)} />
          </label>
          <label>
            When
            <select value={when} onChange={(event) => setWhen((event.target as HTMLSelectElement).value as When)}>
              <option value="in">in some minutes</option>
              <option value="at">at a time</option>
              <option value="cron">on a schedule (cron)</option>
            </select>
          </label>
          {when === 'in' && (
            <label>
              Minutes
              <input type="number" min="1" step="1" required value={minutes} onInput={(event) => setMinutes((event.target as HTMLInputElement).value)} />
            </label>
          )}
          {when === 'at' && (
            <label>
              Time
              <input type="datetime-local" required value={at} onInput={(event) => setAt((event.target as HTMLInputElement).value)} />
            </label>
          )}
          {when === 'cron' && (
            <label>
              Cron (5 fields)
              <input required value={cron} onInput={(event) => setCron((event.target as HTMLInputElement).value)} />
            </label>
          )}
          <button type="submit" class="primary" disabled={busy}>
            Create alarm
          </button>
        </form>
        <Alert message={error} />
      </section>
      <section class="panel" aria-labelledby="alarm-list">
        <h2 id="alarm-list">Alarms</h2>
        {alarms.error && <p class="bad">{alarms.error}</p>}
        {alarms.data?.alarms.length === 0 && <p class="muted">No alarms yet.</p>}
        {/* Cards on a phone, as the other tables: a row as wide as four columns cut its Cancel button off. */}
        <DataTable testId="alarms" class="cards alarm-list" columns={['Status', 'Wake message', 'When', 'Action']}>
          {(alarms.data?.alarms ?? []).map((alarm) => (
            <tr key={alarm.id} data-alarm={alarm.id}>
              <td data-label="Status">
                <span class={`badge ${alarm.status}`}>{alarm.status}</span>
              </td>
              <td class="message" data-label="Wake message">
                <span>{alarm.wake_message}</span>
              </td>
              <td data-label="When">
                <span>{alarm.kind === 'cron' ? `${alarm.cron_expr} (${alarm.timezone})` : new Date(alarm.next_fire_at).toLocaleString()}</span>
              </td>
              <td data-label="Action">
                {alarm.status === 'active' && (
                  <button type="button" class="danger" onClick={() => cancel(alarm)} aria-label={`Cancel the alarm “${alarm.wake_message}”`}>
                    Cancel
                  </button>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      </section>
    </div>
  );
}
