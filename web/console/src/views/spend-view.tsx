import { useData } from '../api/use-data.ts';
import { BarChart } from '../components/bar-chart.tsx';

interface Usage {
  actor: string;
  days: { day: string; spent_credit: string; limit_credit: string; calls: number }[];
  intents: { intent_id: string; calls: number; input_tokens: number; output_tokens: number; cost_credit: string }[];
}

/** Credits have 12 places; a person reads 4. */
function credits(value: string): string {
  const [whole = '0', fraction = ''] = value.split('.');
  return `${whole}.${fraction.slice(0, 4).padEnd(4, '0')}`;
}

/** The agent's model spend at the gateway: per day (a chart and the cap) and per intent. */
export function SpendView() {
  const usage = useData<Usage>('/spend');
  if (usage.error) return <p class="bad">{usage.error}</p>;
  if (usage.data === undefined) return <p class="muted">Loading…</p>;
  const days = [...usage.data.days].reverse();
  const today = usage.data.days[0];
  return (
    <div class="spend">
      <div class="grid">
        <section class="panel" aria-labelledby="today-title">
          <h2 id="today-title">Today</h2>
          <p class="figure" data-testid="spent-today">
            {today ? credits(today.spent_credit) : '0.0000'}
          </p>
          <p class="muted">
            of a daily cap of {today ? credits(today.limit_credit) : '…'} credits · {today?.calls ?? 0} model calls
          </p>
        </section>
        <section class="panel" aria-labelledby="days-title">
          <h2 id="days-title">Spend per day</h2>
          <BarChart
            caption="Model spend per UTC day"
            unit="credits"
            labelHeading="Day (UTC)"
            bars={days.map((day) => ({
              label: day.day.slice(5),
              value: Number(day.spent_credit),
              text: credits(day.spent_credit),
              title: `${day.day}: ${credits(day.spent_credit)} credits, ${day.calls} calls`,
            }))}
          />
        </section>
      </div>
      <section class="panel" aria-labelledby="intents-title">
        <h2 id="intents-title">Spend per intent</h2>
        {usage.data.intents.length === 0 ? (
          <p class="muted">No intent has used a model yet.</p>
        ) : (
          <div class="table-scroll">
            <table data-testid="spend-intents">
              <thead>
                <tr>
                  <th>Intent</th>
                  <th class="num">Calls</th>
                  <th class="num">Tokens in / out</th>
                  <th class="num">Credits</th>
                </tr>
              </thead>
              <tbody>
                {usage.data.intents.map((intent) => (
                  <tr key={intent.intent_id} data-intent={intent.intent_id}>
                    <td>
                      <code>{intent.intent_id.slice(0, 12)}…</code>
                    </td>
                    <td class="num">{intent.calls}</td>
                    <td class="num">
                      {intent.input_tokens} / {intent.output_tokens}
                    </td>
                    <td class="num">{credits(intent.cost_credit)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}
