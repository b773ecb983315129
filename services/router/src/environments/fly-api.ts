import { tracedFetch } from '@platform/kit/observability/tracing';

/** The parts of Fly's Machines REST API the provider uses (https://fly.io/docs/machines/api/), with their shapes. */
export interface FlyMachine {
  id: string;
  name: string;
  state: string;
  region: string;
  private_ip: string;
}

export interface FlyVolume {
  id: string;
  name: string;
  region: string;
  size_gb: number;
  state: string;
}

export class FlyApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'FlyApiError';
    this.status = status;
  }
}

/** A Machines API client for one app: `Authorization: Bearer <FLY_API_TOKEN>`, JSON in and out. */
export class FlyApi {
  readonly #base: string;
  readonly #token: string;

  constructor(apiUrl: string, token: string, appName: string) {
    this.#base = `${apiUrl}/v1/apps/${encodeURIComponent(appName)}`;
    this.#token = token;
  }

  createVolume(body: { name: string; region: string; size_gb: number }): Promise<FlyVolume> {
    return this.#call('POST', '/volumes', body);
  }
  listVolumes(): Promise<FlyVolume[]> {
    return this.#call('GET', '/volumes');
  }
  deleteVolume(id: string): Promise<unknown> {
    return this.#call('DELETE', `/volumes/${id}`);
  }
  createMachine(body: Record<string, unknown>): Promise<FlyMachine> {
    return this.#call('POST', '/machines', body);
  }
  listMachines(): Promise<FlyMachine[]> {
    return this.#call('GET', '/machines');
  }
  getMachine(id: string): Promise<FlyMachine> {
    return this.#call('GET', `/machines/${id}`);
  }
  startMachine(id: string): Promise<unknown> {
    return this.#call('POST', `/machines/${id}/start`);
  }
  stopMachine(id: string): Promise<unknown> {
    return this.#call('POST', `/machines/${id}/stop`);
  }
  /** Resolves once the machine reaches `state`; Fly answers 408 when `timeoutSeconds` pass first. */
  waitFor(id: string, state: 'started' | 'stopped' | 'destroyed', timeoutSeconds: number): Promise<unknown> {
    return this.#call('GET', `/machines/${id}/wait?state=${state}&timeout=${timeoutSeconds}`);
  }
  destroyMachine(id: string): Promise<unknown> {
    return this.#call('DELETE', `/machines/${id}?force=true`);
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await tracedFetch(`${this.#base}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.#token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(70_000),
    });
    const text = await response.text();
    if (!response.ok) {
      let message = text.slice(0, 300);
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? message;
      } catch {
        // Not JSON: the text itself.
      }
      throw new FlyApiError(response.status, `Fly ${method} ${path.split('?')[0]} answered ${response.status}: ${message}`);
    }
    return (text === '' ? {} : JSON.parse(text)) as T;
  }
}
