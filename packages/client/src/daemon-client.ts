import { tracedFetch } from '@platform/kit/observability/tracing';
import { readEnvelope } from './service-session.ts';
import { readServerEvents, type ServerEvent } from './sse-reader.ts';

export type IntentStatus = 'drafting' | 'planning' | 'executing' | 'completed' | 'failed' | 'cancelled';
export const terminalStatuses: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export interface PendingGate {
  node_id: string;
  question: string;
  options: string[];
  expires_at: string;
  guards?: string;
}

export interface AsyncStatus {
  intent_id: string;
  status: IntentStatus;
  result: { answer: string; error?: string; reason?: string; clarification?: string };
  pending_gates: PendingGate[];
  queue_position: number | null;
}

export interface GateAnswer {
  approved: boolean;
  answer: string;
}

/** A live event of the daemon, its data parsed. */
export interface DaemonEvent {
  id: string | undefined;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: each event kind has its own payload.
  data: any;
}

/**
 * The daemon did not answer at all: nothing listens at its address, the name does not resolve, the connection was
 * reset. The message names the address (without credentials) and what the network said, where fetch says only
 * "fetch failed".
 */
export class DaemonUnreachableError extends Error {
  override readonly name = 'DaemonUnreachableError';
  /** The daemon's address as configured, without user, password or query. */
  readonly url: string;
  constructor(url: string, failure: unknown) {
    const cause = (failure as { cause?: { message?: string; code?: string } }).cause;
    super(`the daemon at ${url} did not answer (${cause?.message || cause?.code || (failure as Error).message})`, { cause: failure });
    this.url = url;
  }
}

/** An address fit to print: a URL's user, password and query may hold secrets. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/**
 * The daemon's HTTP API, for a client that delegates to it: submit prose, read status and gates, answer, cancel,
 * and the live events. Every call carries `Authorization: Bearer <PLATFORM_DAEMON_TOKEN>` when a token is given. A
 * daemon that does not answer at all is a DaemonUnreachableError; a refusal is the ServiceCallError of its envelope.
 *
 * @example const daemon = new DaemonClient({ baseUrl: 'http://127.0.0.1:8080', token }); const { intent_id } = await daemon.submit('pay Bob 5')
 */
export class DaemonClient {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: { baseUrl: string; token?: string; fetch?: typeof fetch }) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.token || undefined;
    this.#fetch = options.fetch ?? tracedFetch;
  }

  submit(prose: string, strategy?: 'enqueue' | 'reject' | 'interrupt'): Promise<{ intent_id: string; status: IntentStatus; queue_position: number | null }> {
    return this.#call('POST', '/messages/async', { prose, ...(strategy ? { strategy } : {}) });
  }
  status(intentId: string): Promise<AsyncStatus> {
    return this.#call('GET', `/messages/async/${intentId}`);
  }
  async pendingGates(intentId: string): Promise<PendingGate[]> {
    return (await this.#call<{ pending: PendingGate[] }>('GET', `/intents/${intentId}/gates`)).pending;
  }
  answerGate(intentId: string, nodeId: string, answer: GateAnswer): Promise<{ recorded: boolean; gate: { status: string; answer: string } }> {
    return this.#call('POST', `/intents/${intentId}/gates/${encodeURIComponent(nodeId)}/answer`, answer);
  }
  cancel(intentId: string, reason?: string): Promise<AsyncStatus> {
    return this.#call('POST', `/intents/${intentId}/cancel`, reason ? { reason } : {});
  }
  // biome-ignore lint/suspicious/noExplicitAny: the chain and the folded state, as the daemon answers them.
  intent(intentId: string): Promise<{ id: string; status: IntentStatus; public_key: string; envelopes: any[]; state: any }> {
    return this.#call('GET', `/intents/${intentId}`);
  }
  me(): Promise<{ user_id: string; did: string; public_key: string }> {
    return this.#call('GET', '/me');
  }

  /**
   * The live events, one intent's when `intentId` is given. The iteration ends when the server ends the stream (an
   * intent's ends after its terminal event) or when `signal` aborts; a broken connection throws.
   */
  async *events(options: { intentId?: string; lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<DaemonEvent> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    const query = options.intentId ? `?intent_id=${options.intentId}` : '';
    const response = await this.#send(`/events${query}`, { headers, ...(options.signal ? { signal: options.signal } : {}) });
    if (!response.ok || response.body === null) await readEnvelope(response);
    if (response.body === null) return;
    for await (const event of readServerEvents(response.body)) yield parsed(event);
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.#send(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return readEnvelope<T>(response);
  }

  async #send(path: string, init: RequestInit): Promise<Response> {
    try {
      return await this.#fetch(`${this.baseUrl}${path}`, init);
    } catch (error) {
      // fetch rejects with a TypeError when no answer came (an abort is a DOMException and stays one).
      if (error instanceof TypeError) throw new DaemonUnreachableError(shownUrl(this.baseUrl), error);
      throw error;
    }
  }
}

function parsed(event: ServerEvent): DaemonEvent {
  try {
    return { id: event.id, event: event.event, data: JSON.parse(event.data) };
  } catch {
    return { id: event.id, event: event.event, data: event.data };
  }
}
