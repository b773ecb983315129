import type { ServerEvent } from '@platform/client/sse-reader';
import { useEffect, useRef, useState } from 'preact/hooks';
import { authHeaders } from '../api/client.ts';
import { followStream } from '../api/event-stream.ts';
import { formatMicros, micros, type Transfer } from '../api/money.ts';
import { useData } from '../api/use-data.ts';
import { BarChart } from '../components/bar-chart.tsx';
import { DataTable } from '../components/data-table.tsx';
import { type Hold, HoldsPanel } from './holds-panel.tsx';
import { ReceiptCheck } from './receipt-check.tsx';

interface Account {
  did: string;
  balance: string;
  held: string;
  escrow_bound: string;
  payout_address: string | null;
}

interface Supply {
  supply: string;
  available: string;
  held: string;
  reserve: string;
  fully_reserved: boolean;
}

interface Batch {
  id: string;
  number: number;
  log_size: number;
  closed_at?: string;
  anchor?: { status?: string; tx_hash?: string } | null;
}

const feedSize = 50;

/** Transfer volume per minute over the feed shown, as chart bars. */
function volumeBars(transfers: Transfer[]) {
  const byMinute = new Map<string, bigint>();
  for (const transfer of [...transfers].reverse()) {
    const minute = transfer.at.slice(11, 16);
    byMinute.set(minute, (byMinute.get(minute) ?? 0n) + micros(transfer.amount));
  }
  return [...byMinute].map(([minute, total]) => ({
    label: minute,
    value: Number(total) / 1e6,
    text: formatMicros(total),
    title: `${minute} UTC: ${formatMicros(total)}`,
  }));
}

/**
 * Money: this agent's balance and holds, the reserve beside the supply, the public transfer feed live from
 * settlement's `/v1/stream` (through the router), the batches, and any receipt verified here in the browser.
 */
export function MoneyView() {
  const [stream, setStream] = useState('connecting');
  // The figures a movement changes are read once the feed is live, not before subscribing: one made in between would
  // send no event and leave them stale. The first time the feed is live loads them; each reconnect reloads them.
  const [wasLive, setWasLive] = useState(false);
  const once = (path: string) => (wasLive ? path : undefined);
  const account = useData<Account>(once('/account'));
  const holds = useData<{ holds: Hold[] }>(once('/holds?limit=50'));
  const supply = useData<Supply>(once('/ledger/v1/supply'));
  const batches = useData<{ batches: Batch[] }>(once('/ledger/v1/batches?limit=8'));
  const [transfers, setTransfers] = useState<Transfer[]>([]);
  const connections = useRef(0);

  useEffect(() => {
    const controller = new AbortController();
    const add = (incoming: Transfer[]) =>
      setTransfers((current) => {
        const bySeq = new Map(current.map((transfer) => [transfer.seq, transfer]));
        for (const transfer of incoming) bySeq.set(transfer.seq, transfer);
        return [...bySeq.values()].sort((a, b) => b.seq - a.seq).slice(0, feedSize);
      });
    // The latest transfers once the stream is live (at the start and after each reconnect), not before subscribing:
    // a transfer between the read and the subscription would be in neither. Merged by seq, so never twice.
    const catchUp = () =>
      fetch(`/ledger/v1/transfers?limit=${feedSize}`, { headers: authHeaders() })
        .then((response) => response.json())
        .then((body: { data?: { transfers?: Transfer[] } }) => add(body.data?.transfers ?? []))
        .catch(() => {});
    const onEvent = (event: ServerEvent) => {
      if (event.event === 'transfer') add([JSON.parse(event.data) as Transfer]);
      if (event.event === 'transfer' || event.event === 'anchor') {
        supply.reload();
        account.reload();
        holds.reload();
      }
      if (event.event === 'anchor') batches.reload();
    };
    const onState = (state: string) => {
      setStream(state);
      if (state !== 'live') return;
      catchUp();
      if (connections.current++ === 0) setWasLive(true);
      else for (const figures of [supply, account, holds, batches]) figures.reload();
    };
    followStream('/ledger/v1/stream', { onEvent, onState }, controller.signal);
    return () => controller.abort();
  }, []);

  const mine = account.data?.did;
  return (
    <div class="money">
      <div class="grid">
        <section class="panel" aria-labelledby="balance-title">
          <h2 id="balance-title">Your balance</h2>
          {account.error ? (
            <p class="bad">{account.error}</p>
          ) : (
            <>
              <p class="figure" data-testid="balance">
                {account.data?.balance ?? '…'}
              </p>
              <p class="muted">
                Held: {account.data?.held ?? '…'} · Escrow bound: {account.data?.escrow_bound ?? '…'}
              </p>
              <p class="muted small">
                <code>{mine}</code>
              </p>
            </>
          )}
        </section>
        <section class="panel" aria-labelledby="reserve-title">
          <h2 id="reserve-title">Reserve and supply</h2>
          {supply.data ? (
            <dl class="pairs">
              <dt>Supply</dt>
              <dd data-testid="supply">{supply.data.supply}</dd>
              <dt>Reserve in the vault</dt>
              <dd data-testid="reserve">{supply.data.reserve}</dd>
              <dt>Fully reserved</dt>
              <dd class={supply.data.fully_reserved ? 'good' : 'bad'} data-testid="fully-reserved">
                {supply.data.fully_reserved ? 'yes' : 'no'}
              </dd>
            </dl>
          ) : (
            <p class="muted">{supply.error ?? '…'}</p>
          )}
        </section>
        <ReceiptCheck />
      </div>
      <section class="panel" aria-labelledby="feed-title">
        <h2 id="feed-title">
          Transfers <span class={`stream-state ${stream}`}>{stream === 'live' ? 'live' : stream}</span>
        </h2>
        <BarChart
          bars={volumeBars(transfers)}
          caption="Transfer volume per minute of the transfers shown"
          unit="settlement units"
          labelHeading="Minute (UTC)"
        />
        <DataTable testId="transfers" class="cards" columns={[{ label: 'Seq', num: true }, 'Kind', 'From', 'To', { label: 'Amount', num: true }, 'At']}>
          {transfers.map((transfer) => (
            <tr key={transfer.seq} data-seq={transfer.seq}>
              <td class="num" data-label="Seq">
                {transfer.seq}
              </td>
              <td data-label="Kind">{transfer.kind}</td>
              <td data-label="From">
                <code>{short(transfer.from, mine)}</code>
              </td>
              <td data-label="To">
                <code>{short(transfer.to, mine)}</code>
              </td>
              <td class="num" data-label="Amount">
                {transfer.amount}
              </td>
              <td data-label="At">{new Date(transfer.at).toLocaleTimeString()}</td>
            </tr>
          ))}
        </DataTable>
      </section>
      <div class="grid">
        <HoldsPanel holds={holds} mine={mine} short={(did) => short(did, mine)} />
        <section class="panel" aria-labelledby="batches-title">
          <h2 id="batches-title">Batches</h2>
          {batches.data?.batches.length === 0 && <p class="muted">No batch has closed yet.</p>}
          <ul data-testid="batches">
            {(batches.data?.batches ?? []).map((batch) => (
              <li key={batch.id} data-batch={batch.number}>
                #{batch.number}: receipts up to {batch.log_size}
                {batch.anchor?.status ? `, anchor ${batch.anchor.status}` : ''}
              </li>
            ))}
          </ul>
        </section>
      </div>
    </div>
  );
}

function short(did: string | null, mine: string | undefined): string {
  if (did === null) return '—';
  if (did === mine) return 'you';
  return did.length > 28 ? `${did.slice(0, 22)}…${did.slice(-4)}` : did;
}
