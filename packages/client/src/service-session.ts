import type { AgentKey } from './agent-key.ts';

/** A failure answered by a service in the `{ok:false, error}` envelope (or a transport failure). */
export class ServiceCallError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryable: boolean;
  constructor(status: number, code: string, message: string, retryable = false) {
    super(`${status} ${code}: ${message}`);
    this.name = 'ServiceCallError';
    this.status = status;
    this.code = code;
    this.retryable = retryable;
  }
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
}

interface Envelope<T> {
  ok: boolean;
  data?: T;
  error?: { code: string; message: string; retryable?: boolean };
}

/**
 * The `data` of a platform envelope, or a ServiceCallError carrying the service's code and message (or the status,
 * when the answer is not an envelope).
 *
 * @example const alarms = await readEnvelope<{ alarms: AlarmView[] }>(await fetch(url, init))
 */
export async function readEnvelope<T>(response: Response): Promise<T> {
  const envelope = (await response.json().catch(() => ({ ok: false }))) as Envelope<T>;
  if (response.ok && envelope.ok && envelope.data !== undefined) return envelope.data;
  const error = envelope.error ?? { code: 'internal', message: `unexpected ${response.status} answer` };
  throw new ServiceCallError(response.status, error.code, error.message, error.retryable ?? false);
}

/**
 * An authenticated session with a DID-handshake service: runs challenge/verify once, keeps the
 * principal token, and runs the handshake again when the token is refused (expired).
 *
 * @example const session = new ServiceSession({ baseUrl, service: 'scheduler', principalHeader: 'X-Scheduler-Agent', key })
 */
export class ServiceSession {
  readonly #options: SessionOptions;
  readonly #fetch: typeof fetch;
  #token: string | undefined;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
  }

  /** Runs the handshake and returns the owner user id the service derived from the DID. */
  async authenticate(): Promise<string> {
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
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.#fetch(new URL(path, this.#options.baseUrl), {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return readEnvelope<T>(response);
  }
}
