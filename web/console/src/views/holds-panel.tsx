import type { Loaded } from '../api/use-data.ts';
import { DataTable } from '../components/data-table.tsx';

export interface Hold {
  id: string;
  payer: string;
  payee: string;
  amount: string;
  expires_at: string;
  created_at: string;
}

/**
 * The agent's open holds from settlement (`/holds` on the daemon): what it has locked for others and what others
 * have locked for it, with the amount, who is paid, and when the hold expires (an expired one returns to its payer
 * at settlement's next sweep).
 */
export function HoldsPanel({ holds, mine, short }: { holds: Loaded<{ holds: Hold[] }>; mine: string | undefined; short: (did: string) => string }) {
  const now = Date.now();
  return (
    <section class="panel" aria-labelledby="holds-title">
      <h2 id="holds-title">Open holds</h2>
      {holds.error && <p class="bad">{holds.error}</p>}
      {holds.data?.holds.length === 0 && <p class="muted">No open holds.</p>}
      {(holds.data?.holds.length ?? 0) > 0 && (
        <DataTable testId="holds" class="cards" columns={['Direction', { label: 'Amount', num: true }, 'Payee', 'Expires']}>
          {holds.data?.holds.map((hold) => {
            const expired = Date.parse(hold.expires_at) <= now;
            return (
              <tr key={hold.id} data-hold={hold.id}>
                <td data-label="Direction">{hold.payer === mine ? 'you hold' : `held for you by ${short(hold.payer)}`}</td>
                <td class="num" data-label="Amount">
                  {hold.amount}
                </td>
                <td data-label="Payee">
                  <code>{short(hold.payee)}</code>
                </td>
                <td data-label="Expires">
                  <span>
                    <time dateTime={hold.expires_at} title={hold.expires_at}>
                      {new Date(hold.expires_at).toLocaleString()}
                    </time>
                    {expired && <span class="badge bad"> expired, returning</span>}
                  </span>
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}
