import { tracedFetch } from '@platform/kit/observability/tracing';
import type { AgentKey } from './agent-key-type.ts';

/** A failure answered by a service in the `{ok:false, error}` envelope (or a transport failure). */
export class ServiceCallError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryable: boolean;
  /** The envelope's `reason`, when the service gave one (e.g. settlement's `insufficient_funds`). */
  readonly reason: string | undefined;
  /** The error's other members, as the service sent them (the connector's `confirm`, `action`, `connect`). */
  readonly details: Readonly<Record<string, unknown>>;
  /** The service's own message, without the status and code this error's message leads with. */
  readonly serviceMessage: string;
  constructor(status: number, code: string, message: string, retryable = false, reason?: string, details: Record<string, unknown> = {}) {
    super(`${status} ${code}: ${message}`);
    this.name = 'ServiceCallError';
    this.status = status;
    this.code = code;
    this.retryable = retryable;
    this.reason = reason;
    this.details = details;
    this.serviceMessage = message;
  }
}

/**
 * How a session sends a request: `fetch` by default (the kit's `tracedFetch`: exactly `fetch` unless the service
 * making the call traces, then with its client span and `traceparent`); a service calling another on a hot path
 * passes one over the kit's keep-alive JSON client instead (which traces the same way).
 */
export type SessionTransport = (
  method: string,
  url: URL,
  init: { headers: Record<string, string>; body?: unknown },
) => Promise<{ status: number; json: unknown }>;

/** A transport over `fetch` (the default). */
export function fetchTransport(send: typeof fetch): SessionTransport {
  return async (method, url, init) => {
    const response = await send(url, {
      method,
      headers: { ...init.headers, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    return { status: response.status, json: await response.json().catch(() => undefined) };
  };
}

export interface SessionOptions {
  baseUrl: string;
  /** Service name in the signed message: `platform-<service>-auth`. */
  service: string;
  /** The principal token header, e.g. `X-Scheduler-Agent`. */
  principalHeader: string;
  transportToken?: string;
  key: AgentKey;
  fetch?: typeof fetch;
  /** In place of `fetch`. */
  transport?: SessionTransport;
}

interface Envelope<T> {
  ok: boolean;
  data?: T;
  error?: { code: string; message: string; retryable?: boolean; reason?: string; [member: string]: unknown };
}

/**
 * The `data` of a platform envelope, or a ServiceCallError carrying the service's code and message (or the status,
 * when the answer is not an envelope).
 *
 * @example const alarms = await readEnvelope<{ alarms: AlarmView[] }>(await fetch(url, init))
 */
export async function readEnvelope<T>(response: Response): Promise<T> {
  return envelopeData<T>(response.status, await response.json().catch(() => undefined));
}

/** The `data` of an answer's envelope, or the ServiceCallError it carries. */
export function envelopeData<T>(status: number, json: unknown): T {
  const envelope = (json ?? { ok: false }) as Envelope<T>;
  if (status >= 200 && status < 300 && envelope.ok && envelope.data !== undefined) return envelope.data;
  throw callError(status, envelope);
}

/** The ServiceCallError a failure envelope (`{ok: false, error}`) answered with `status` stands for. */
export function callError(status: number, envelope: { error?: Envelope<unknown>['error'] }): ServiceCallError {
  const { code, message, retryable, reason, ...details } = envelope.error ?? { code: 'internal', message: `unexpected ${status} answer` };
  return new ServiceCallError(status, code, message, retryable ?? false, reason, details);
}

/**
 * An authenticated session with a DID-handshake service: runs challenge/verify once, keeps the
 * principal token, and runs the handshake again when the token is refused (expired).
 *
 * @example const session = new ServiceSession({ baseUrl, service: 'scheduler', principalHeader: 'X-Scheduler-Agent', key })
 */
export class ServiceSession {
  readonly #options: SessionOptions;
  readonly #send: SessionTransport;
  #token: string | undefined;
  #authenticating: Promise<string> | undefined;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#send = options.transport ?? fetchTransport(options.fetch ?? tracedFetch);
  }

  /** Runs the handshake and returns the owner user id the service derived from the DID. */
  authenticate(): Promise<string> {
    // Concurrent callers share one handshake (a burst of requests at start must not run one each).
    this.#authenticating ??= this.#handshake().finally(() => {
      this.#authenticating = undefined;
    });
    return this.#authenticating;
  }

  async #handshake(): Promise<string> {
    const { key } = this.#options;
    const challenge = await this.#call<{ nonce: string; message: string }>('POST', '/v1/agent/auth/challenge', { did: key.did }, false);
    const session = await this.#call<{ token: string; owner_user_id: string }>(
      'POST',
      '/v1/agent/auth/verify',
      { did: key.did, public_key: key.publicKeyHex, nonce: challenge.nonce, signature: key.sign(challenge.message) },
      false,
    );
    this.#token = session.token;
    return session.owner_user_id;
  }

  /** Calls a route without the principal token (public reads; writes a signed intent authorises by itself). */
  requestWithoutPrincipal<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.#call<T>(method, path, body, false);
  }

  /** Calls a principal route; authenticates first when needed and once more if the token is refused. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!this.#token) await this.authenticate();
    try {
      return await this.#call<T>(method, path, body, true);
    } catch (error) {
      if (!(error instanceof ServiceCallError) || error.status !== 401 || !/principal token/.test(error.message)) throw error;
      await this.authenticate();
      return this.#call<T>(method, path, body, true);
    }
  }

  async #call<T>(method: string, path: string, body: unknown, withPrincipal: boolean): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.#options.transportToken) headers.authorization = `Bearer ${this.#options.transportToken}`;
    if (withPrincipal && this.#token) headers[this.#options.principalHeader.toLowerCase()] = this.#token;
    const answer = await this.#send(method, new URL(path, this.#options.baseUrl), { headers, ...(body === undefined ? {} : { body }) });
    return envelopeData<T>(answer.status, answer.json);
  }
}
