import { formatAmount, parseAmount } from '@platform/kit/money';
import type { AgentKey } from './agent-key-type.ts';
import { type PaymentTerms, signHoldForTerms, signVoucher } from './marketplace-payments.ts';

/** A marketplace answer in the spec's error envelope `{error, message, detail}`. */
export class MarketplaceError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: Record<string, unknown>;
  constructor(status: number, code: string, message: string, detail: Record<string, unknown>) {
    super(`${status} ${code}: ${message}`);
    this.name = 'MarketplaceError';
    this.status = status;
    this.code = code;
    this.detail = detail;
  }
}

export interface MarketplaceClientOptions {
  baseUrl: string;
  key: AgentKey;
  /** The most one call may hold, or one channel lock, without asking anyone: larger terms are refused here. */
  maxPayment: string;
  fetch?: typeof fetch;
}

export interface InvokeRequest {
  operation: string;
  args?: Record<string, unknown>;
  quoteId?: string;
  /** Without one, the payment's nonce is the key: a retry of this call object is still charged once. */
  idempotencyKey?: string;
}

/** Discovery filters, as the spec names them. */
export interface DiscoverFilters {
  kind?: string;
  max_price_wei?: string;
  min_quality?: string;
  min_uptime_bps?: number;
  confidential?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: answers are the service's JSON, typed by the caller where it matters.
type Json = any;

/**
 * The marketplace for a calling agent: the caller handshake (`Authorization: Bearer` + `X-Caller-DID`), quotes,
 * paid calls (the 402 terms checked against `maxPayment`, signed, and sent back with the same idempotency key),
 * receipts, and channels whose vouchers it signs call by call.
 *
 * @example const market = new MarketplaceClient({ baseUrl, key, maxPayment: '1' }); const out = await market.invoke(id, { operation: 'echo', args })
 */
export class MarketplaceClient {
  readonly #options: MarketplaceClientOptions;
  readonly #fetch: typeof fetch;
  readonly #maxMicros: bigint;
  #token: string | undefined;

  constructor(options: MarketplaceClientOptions) {
    const max = parseAmount(options.maxPayment);
    if (!max.ok) throw new TypeError(`maxPayment: ${max.reason}`);
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#maxMicros = max.micros;
  }

  /** Ranked public search (`POST /v1/discover`, no credentials): `{results, next_cursor}`. */
  discover(request: { query?: string; filters?: DiscoverFilters; limit?: number; cursor?: string }): Promise<Json> {
    return this.#request('POST', '/v1/discover', request, {});
  }

  /** A listing with its manifest (public). */
  service(serviceId: string): Promise<Json> {
    return this.#request('GET', `/v1/services/${encodeURIComponent(serviceId)}`, undefined, {});
  }

  quote(serviceId: string, operation: string, estimatedUnits = '1'): Promise<Json> {
    return this.#caller('POST', `/v1/quote/${serviceId}`, { operation, estimated_units: estimatedUnits });
  }

  /** A paid call: asked once without payment, then paid as the 402's terms ask (if they fit `maxPayment`). */
  async invoke(serviceId: string, request: InvokeRequest): Promise<Json> {
    const body = { operation: request.operation, args: request.args ?? {}, ...(request.quoteId ? { quote_id: request.quoteId } : {}) };
    const headers: Record<string, string> = request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {};
    return this.#paid(`/v1/invoke/${serviceId}`, body, headers);
  }

  invocation(id: string): Promise<Json> {
    return this.#caller('GET', `/v1/invocations/${id}`);
  }

  receipt(invocationId: string): Promise<Json> {
    return this.#caller('GET', `/v1/receipts/${invocationId}`);
  }

  /** Opens a channel locking `deposit` (one hold); its calls are then paid by vouchers. */
  async openChannel(serviceId: string, deposit: string, options: { expiresInSeconds?: number } = {}): Promise<MarketplaceChannel> {
    const listing = await this.#request('GET', `/v1/services/${serviceId}`, undefined, {});
    const caps = new Map<string, bigint>(
      (listing.operations as Array<{ name: string; price_per_unit: string; max_units: number }>).map((op) => [
        op.name,
        micros(op.price_per_unit) * BigInt(op.max_units),
      ]),
    );
    const body = { service_id: serviceId, deposit, ...(options.expiresInSeconds ? { expires_in_seconds: options.expiresInSeconds } : {}) };
    const channel = await this.#paid('/v1/channels', body, {});
    return new MarketplaceChannel(this, this.#options.key, channel, caps);
  }

  /** For MarketplaceChannel: a caller route. */
  call(method: string, path: string, body?: unknown): Promise<Json> {
    return this.#caller(method, path, body);
  }

  async #paid(path: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<Json> {
    try {
      return await this.#caller('POST', path, body, headers);
    } catch (error) {
      if (!(error instanceof MarketplaceError) || error.code !== 'payment_required' || !error.detail.terms) throw error;
      const terms = error.detail.terms as PaymentTerms;
      if (terms.purpose !== 'hold' || micros(terms.amount) > this.#maxMicros)
        throw new MarketplaceError(
          402,
          'payment_required',
          `the marketplace asks a hold of ${terms.amount}, more than this client may pay (${this.#options.maxPayment})`,
          {
            terms,
          },
        );
      return this.#caller('POST', path, body, { ...headers, 'x-ledger-payment': signHoldForTerms(this.#options.key, terms) });
    }
  }

  async #caller(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Json> {
    this.#token ??= await this.#handshake();
    try {
      return await this.#request(method, path, body, this.#callerHeaders(headers));
    } catch (error) {
      if (!(error instanceof MarketplaceError) || error.status !== 401 || !/caller token/.test(error.message)) throw error;
      this.#token = await this.#handshake();
      return this.#request(method, path, body, this.#callerHeaders(headers));
    }
  }

  #callerHeaders(headers: Record<string, string>): Record<string, string> {
    return { ...headers, authorization: `Bearer ${this.#token}`, 'x-caller-did': this.#options.key.did };
  }

  async #handshake(): Promise<string> {
    const { key } = this.#options;
    const challenge = await this.#request('POST', '/v1/agent/auth/challenge', { did: key.did }, {});
    const verified = await this.#request(
      'POST',
      '/v1/agent/auth/verify',
      { did: key.did, public_key: key.publicKeyHex, nonce: challenge.nonce, signature: key.sign(challenge.message) },
      {},
    );
    return verified.token as string;
  }

  async #request(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Json> {
    const response = await this.#fetch(new URL(path, this.#options.baseUrl), {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json().catch(() => ({}))) as Json;
    if (response.ok && answer.ok === true) return answer.data;
    throw new MarketplaceError(
      response.status,
      answer.error ?? 'internal_error',
      answer.message ?? `unexpected ${response.status} answer`,
      answer.detail ?? {},
    );
  }
}

/**
 * A channel as its caller keeps it: each call signs the next voucher allowing what is spent plus that call's cap;
 * the answer's `tab.spent` says what the call cost.
 */
export class MarketplaceChannel {
  readonly id: string;
  readonly serviceId: string;
  readonly #client: MarketplaceClient;
  readonly #key: AgentKey;
  readonly #caps: Map<string, bigint>;
  #sequence = 0n;
  #spent = 0n;
  /** The cumulative amount of the last voucher signed (what `cosign` signs again). */
  #allowed = '0.000000';

  constructor(client: MarketplaceClient, key: AgentKey, view: { id: string; service_id: string }, caps: Map<string, bigint>) {
    this.#client = client;
    this.#key = key;
    this.id = view.id;
    this.serviceId = view.service_id;
    this.#caps = caps;
  }

  /** What the channel has spent, as the marketplace last said. */
  get spent(): string {
    return formatAmount(this.#spent);
  }

  async call(operation: string, args: Record<string, unknown> = {}): Promise<Json> {
    const cap = this.#caps.get(operation);
    if (cap === undefined) throw new TypeError(`the service has no operation "${operation}"`);
    this.#sequence += 1n;
    this.#allowed = formatAmount(this.#spent + cap);
    const voucher = signVoucher(this.#key, { kind: 'channel', id: this.id, service_id: this.serviceId }, this.#sequence, this.#allowed);
    const answer = await this.#client.call('POST', `/v1/invoke/${this.serviceId}`, {
      operation,
      args,
      payment: { rail: 'voucher', channel_id: this.id, ...voucher },
    });
    this.#spent = micros(answer.tab.spent as string);
    return answer;
  }

  /** The marketplace's signed statement of the channel (the last voucher again). */
  cosign(): Promise<Json> {
    const voucher = signVoucher(this.#key, { kind: 'channel', id: this.id, service_id: this.serviceId }, this.#sequence, this.#allowed);
    return this.#client.call('POST', '/v1/vouchers/cosign', { channel_id: this.id, ...voucher });
  }

  close(): Promise<Json> {
    return this.#client.call('POST', `/v1/channels/${this.id}/close`);
  }
}

function micros(text: string): bigint {
  const parsed = parseAmount(text, { allowZero: true });
  if (!parsed.ok) throw new TypeError(parsed.reason);
  return parsed.micros;
}
