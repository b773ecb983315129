import { randomBytes } from 'node:crypto';
import { MarketplaceError } from './marketplace-client.ts';
import { readServerEvents } from './sse-reader.ts';
import { signWalletRequest, type WalletSigner } from './wallet-request.ts';

/** A deployment as the marketplace shows it (GET /v1/services/{id}/deployments/{deployment_id}). */
export interface DeploymentView {
  id: string;
  service_id: string;
  artifact_id: string;
  status: 'build' | 'deploy' | 'running' | 'failed' | 'stopped';
  current: boolean;
  failed_phase: 'build' | 'deploy' | 'running' | null;
  failure: string | null;
  phases: Array<{ name: string; state: string; started_at: string | null; finished_at: string | null; duration_ms: number | null }>;
}

export interface LogLineView {
  id: string;
  at: string;
  level: string;
  deployment_id: string;
  invocation_id: string | null;
  message: string;
}

export interface LogQuery {
  since?: string;
  until?: string;
  level?: string;
  deployment_id?: string;
  limit?: number;
}

/**
 * The marketplace's developer routes for hosted mode, every request signed by the developer's wallet
 * (`Authorization: Wallet`, wallet-request.ts): no sign-in round trip and no token to keep. Uploads are the
 * multipart form Workers for Platforms takes: a `metadata` part and one part per module, named by its path.
 */
export class MarketplaceDeveloperClient {
  readonly #baseUrl: string;
  readonly #signer: WalletSigner;

  constructor(options: { baseUrl: string; signer: WalletSigner }) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#signer = options.signer;
  }

  async createListing(manifest: unknown): Promise<{ id: string; slug: string; status: string }> {
    return this.#json('POST', '/v1/services', { manifest });
  }

  async publish(serviceId: string): Promise<{ id: string; status: string }> {
    return this.#json('POST', `/v1/services/${encodeURIComponent(serviceId)}/publish`, {});
  }

  async uploadArtifact(serviceId: string, metadata: unknown, modules: Record<string, Uint8Array>): Promise<{ id: string; size_bytes: number }> {
    const form = new FormData();
    form.set('metadata', new Blob([JSON.stringify(metadata)], { type: 'application/json' }));
    for (const [name, bytes] of Object.entries(modules))
      form.set(name, new Blob([bytes], { type: name.endsWith('.wasm') ? 'application/wasm' : 'application/javascript+module' }), name);
    const encoded = new Request('http://upload.invalid/', { method: 'POST', body: form });
    const body = new Uint8Array(await encoded.arrayBuffer());
    return this.#send('POST', `/v1/services/${encodeURIComponent(serviceId)}/artifacts`, body, encoded.headers.get('content-type') as string);
  }

  async deploy(serviceId: string, body: { artifact_id?: string; deployment_id?: string } = {}): Promise<DeploymentView> {
    return this.#json('POST', `/v1/services/${encodeURIComponent(serviceId)}/deploy`, body);
  }

  async logs(serviceId: string, query: LogQuery = {}): Promise<LogLineView[]> {
    return (await this.#json<{ lines: LogLineView[] }>('GET', `/v1/services/${encodeURIComponent(serviceId)}/logs${searchOf(query)}`)).lines;
  }

  /** The lines, then every new one, until `signal` aborts or the marketplace ends the stream. */
  async followLogs(serviceId: string, query: LogQuery, onLine: (line: LogLineView) => void, signal?: AbortSignal): Promise<void> {
    const path = `/v1/services/${encodeURIComponent(serviceId)}/logs${searchOf({ ...query, follow: true })}`;
    const response = await fetch(`${this.#baseUrl}${path}`, { headers: await this.#headers('GET', path), ...(signal ? { signal } : {}) });
    if (!response.ok || !response.body) throw await failureOf(response);
    try {
      for await (const event of readServerEvents(response.body)) if (event.event === 'log') onLine(JSON.parse(event.data) as LogLineView);
    } catch (error) {
      if (!signal?.aborted) throw error;
    }
  }

  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return body === undefined ? this.#send(method, path) : this.#send(method, path, new TextEncoder().encode(JSON.stringify(body)), 'application/json');
  }

  async #headers(method: string, path: string, body?: Uint8Array): Promise<Record<string, string>> {
    return signWalletRequest(this.#signer, {
      method,
      pathWithQuery: path,
      body,
      timestamp: Math.floor(Date.now() / 1000),
      nonce: randomBytes(16).toString('base64url'),
    });
  }

  async #send<T>(method: string, path: string, body?: Uint8Array, contentType?: string): Promise<T> {
    const headers = await this.#headers(method, path, body);
    if (contentType) headers['content-type'] = contentType;
    const response = await fetch(`${this.#baseUrl}${path}`, { method, headers, ...(body ? { body } : {}) });
    if (!response.ok) throw await failureOf(response);
    return ((await response.json()) as { data: T }).data;
  }
}

function searchOf(query: LogQuery & { follow?: boolean }): string {
  const entries = Object.entries(query).filter(([, value]) => value !== undefined);
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries.map(([name, value]): [string, string] => [name, String(value)])).toString()}`;
}

async function failureOf(response: Response): Promise<MarketplaceError> {
  const body = (await response.json().catch(() => ({}))) as { error?: string; message?: string; detail?: Record<string, unknown> };
  return new MarketplaceError(response.status, body.error ?? 'unknown', body.message ?? `the marketplace answered ${response.status}`, body.detail ?? {});
}
