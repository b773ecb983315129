import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api/client.ts';
import { micros } from '../api/money.ts';
import { useData } from '../api/use-data.ts';
import { DataTable } from '../components/data-table.tsx';

interface Invocation {
  invocation_id: string;
  service_id: string;
  operation: string;
  status: string;
  cost: string;
  started_at: string;
}

type Mark = { state: 'checking' } | { state: 'verified'; signer: string } | { state: 'failed' | 'pending' | 'unavailable'; reason: string };

/**
 * Fetches an invocation's EIP-712 receipt through the daemon and checks it here: the signer recovered from the typed
 * data must be the one the marketplace publishes (`/market/v1/registry`'s operator, read apart from the receipt), and
 * the receipt must name this invocation and its cost. The verifier (viem's secp256k1 and keccak) is loaded only now,
 * so the first load stays small.
 */
async function checkReceipt(invocation: Invocation, signer: string): Promise<Mark> {
  let receipt: Parameters<typeof import('@platform/kit/marketplace-receipt').verifyMarketplaceReceipt>[0];
  try {
    receipt = await api(`/invocations/${invocation.invocation_id}/receipt`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return { state: 'pending', reason: 'the receipt comes when the call ends' };
    return { state: 'unavailable', reason: (error as Error).message };
  }
  const { verifyMarketplaceReceipt } = await import('@platform/kit/marketplace-receipt');
  const verdict = await verifyMarketplaceReceipt(receipt, {
    signer,
    invocation: { invocation_id: invocation.invocation_id, cost_micros: micros(invocation.cost) },
  });
  return verdict.ok ? { state: 'verified', signer: verdict.signer } : { state: 'failed', reason: verdict.reason };
}

function ReceiptMark({ invocation, signer }: { invocation: Invocation; signer: string | undefined }) {
  const [mark, setMark] = useState<Mark>({ state: 'checking' });
  useEffect(() => {
    if (signer === undefined) return;
    let live = true;
    checkReceipt(invocation, signer).then((result) => live && setMark(result));
    return () => {
      live = false;
    };
  }, [invocation.invocation_id, signer]);
  const text =
    mark.state === 'checking'
      ? 'Checking the receipt…'
      : mark.state === 'verified'
        ? `✓ Receipt verified: signed by the marketplace (${mark.signer.slice(0, 10)}…)`
        : mark.state === 'failed'
          ? `✗ Receipt failed: ${mark.reason}`
          : `Receipt not checked: ${mark.reason}`;
  return (
    <span class={mark.state === 'verified' ? 'good' : mark.state === 'failed' ? 'bad verdict' : 'muted'} data-receipt={mark.state}>
      {text}
    </span>
  );
}

/** The agent's own marketplace calls, newest first, each with its receipt checked in the browser. */
export function InvocationsPanel({ names }: { names: Map<string, string> }) {
  const invocations = useData<{ total: string; items: Invocation[] }>('/invocations?limit=30');
  const registry = useData<{ operator: string }>('/market/v1/registry');
  const signer = registry.data?.operator;
  return (
    <section class="panel" aria-labelledby="calls-title">
      <h2 id="calls-title">Your calls</h2>
      {invocations.error && <p class="bad">{invocations.error}</p>}
      {registry.error && <p class="bad">The marketplace’s signer is unknown, so no receipt can be checked: {registry.error}</p>}
      {invocations.data && (
        <p class="muted">
          Spent on the marketplace: <strong>{invocations.data.total}</strong>
        </p>
      )}
      {invocations.data?.items.length === 0 && <p class="muted">Your agent has not called any service yet.</p>}
      {(invocations.data?.items.length ?? 0) > 0 && (
        <DataTable testId="invocations" class="cards" columns={['Service', 'Operation', 'Status', { label: 'Cost', num: true }, 'When', 'Receipt']}>
          {invocations.data?.items.map((invocation) => (
            <tr key={invocation.invocation_id} data-invocation={invocation.invocation_id}>
              <td data-label="Service">{names.get(invocation.service_id) ?? <code>{invocation.service_id}</code>}</td>
              <td data-label="Operation">{invocation.operation}</td>
              <td data-label="Status">
                <span class={`badge ${invocation.status}`}>{invocation.status}</span>
              </td>
              <td class="num" data-label="Cost">
                {invocation.cost}
              </td>
              <td data-label="When">
                <time dateTime={invocation.started_at}>{new Date(invocation.started_at).toLocaleString()}</time>
              </td>
              <td data-label="Receipt">
                <ReceiptMark invocation={invocation} signer={signer} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
