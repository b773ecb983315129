import { useData } from '../api/use-data.ts';
import { InvocationsPanel } from './invocations-panel.tsx';

interface Listing {
  id: string;
  slug: string;
  display_name: string;
  summary: string;
  kind: string;
  quality_score: string | number;
  uptime_bps: number;
  operations: { name?: string; operation?: string }[];
}

/** The marketplace's catalog (its public reads, through the router's `/market`) and the agent's own calls. */
export function MarketView() {
  const catalog = useData<{ results: Listing[]; next_cursor: string | null }>('/market/v1/catalog?limit=50');
  const names = new Map((catalog.data?.results ?? []).map((listing) => [listing.id, listing.display_name]));
  return (
    <div class="market">
      <InvocationsPanel names={names} />
      <section class="panel" aria-labelledby="market-title">
        <h2 id="market-title">Marketplace</h2>
        {catalog.error && <p class="bad">{catalog.error}</p>}
        {catalog.data?.results.length === 0 && <p class="muted">No service is listed yet.</p>}
        <ul class="listings">
          {(catalog.data?.results ?? []).map((listing) => (
            <li key={listing.id}>
              <strong>{listing.display_name}</strong> <span class="badge">{listing.kind}</span>
              <p class="muted">{listing.summary}</p>
              <p class="small">
                Quality {String(listing.quality_score)} · uptime {(listing.uptime_bps / 100).toFixed(2)}% ·{' '}
                {listing.operations.map((operation) => operation.name ?? operation.operation).join(', ')}
              </p>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
