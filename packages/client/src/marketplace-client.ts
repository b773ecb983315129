import { formatAmount, parseAmount } from '@platform/kit/money';
import { tracedFetch } from '@platform/kit/observability/tracing';
import type { AgentKey } from './agent-key-type.ts';
import { type PaymentTerms, signHoldForTerms, signVoucher, termsForCall } from './marketplace-payments.ts';
import { fetchTransport, type SessionTransport } from './service-session.ts';

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
  /** In place of `fetch`: e.g. the kit's keep-alive JSON client, for an agent making many calls. */
  transport?: SessionTransport;
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
  readonly #send: SessionTransport;
  readonly #maxMicros: bigint;
  #token: string | undefined;
  /** Terms a 402 gave, by service, operation and quote, with how long they stayed valid: later calls pay at once. */
  readonly #knownTerms = new Map<string, { terms: PaymentTerms; validMs: number }>();

  constructor(options: MarketplaceClientOptions) {
    const max = parseAmount(options.maxPayment);
    if (!max.ok) throw new TypeError(`maxPayment: ${max.reason}`);
    this.#options = options;
    this.#send = options.transport ?? fetchTransport(options.fetch ?? tracedFetch);
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

  /**
   * A paid call. The first call of a service's operation (and quote) is asked without payment and then paid as the
   * 402's terms ask, if they fit `maxPayment`; later ones are paid in one request with terms made from those
   * (`termsForCall`), and fall back to the 402's terms when the marketplace's have changed.
   */
  async invoke(serviceId: string, request: InvokeRequest): Promise<Json> {
    const args = request.args ?? {};
    const body = { operation: request.operation, args, ...(request.quoteId ? { quote_id: request.quoteId } : {}) };
    const headers: Record<string, string> = request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {};
    const path = `/v1/invoke/${serviceId}`;
    const termsKey = `${serviceId}\n${request.operation}\n${request.quoteId ?? ''}`;
    const known = this.#knownTerms.get(termsKey);
    const learn = (terms: PaymentTerms) => {
      const validMs = Date.parse(terms.expires_at) - Date.now();
      if (validMs > 0) this.#knownTerms.set(termsKey, { terms, validMs });
    };
    if (!known) return this.#paid(path, body, headers, learn);
    // Expiring well before the marketplace's own terms would (30 s, or half their life), so clocks a little apart agree.
    const expiresAt = new Date(Date.now() + Math.max(known.validMs / 2, known.validMs - 30_000));
    const call = { serviceId, operation: request.operation, args, quoteId: request.quoteId ?? null, caller: this.#options.key.did };
    const terms = termsForCall(known.terms, call, expiresAt);
    try {
      return await this.#caller('POST', path, body, { ...headers, 'x-ledger-payment': signHoldForTerms(this.#options.key, terms) });
    } catch (error) {
      // Nothing moved on a payment that does not fit the terms: pay what the marketplace asks now.
      if (!(error instanceof MarketplaceError) || !termsChanged.has(String(error.detail.reason))) throw error;
      this.#knownTerms.delete(termsKey);
      return this.#payTerms(path, body, headers, error, learn);
    }
  }

  invocation(id: string): Promise<Json> {
    return this.#caller('GET', `/v1/invocations/${id}`);
  }

  /** The caller's spend by service and its invocations, newest first (`GET /v1/me/spend`): `{total, by_service, items, next_cursor}`. */
  spend(page: { limit?: number; cursor?: string } = {}): Promise<Json> {
    const query = new URLSearchParams(Object.entries(page).map(([name, value]): [string, string] => [name, String(value)]));
    return this.#caller('GET', `/v1/me/spend${query.size > 0 ? `?${query}` : ''}`);
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
    const channel = await this.#paid('/v1/channels', body, {}, () => undefined);
    return new MarketplaceChannel(this, this.#options.key, channel, caps);
  }

  /** For MarketplaceChannel: a caller route. */
  call(method: string, path: string, body?: unknown): Promise<Json> {
    return this.#caller(method, path, body);
  }

  async #paid(path: string, body: Record<string, unknown>, headers: Record<string, string>, learn: (terms: PaymentTerms) => void): Promise<Json> {
    try {
      return await this.#caller('POST', path, body, headers);
    } catch (error) {
      return this.#payTerms(path, body, headers, error, learn);
    }
  }

  /** Pays as a 402 asks (its terms checked against `maxPayment` first); any other error is thrown again. */
  async #payTerms(path: string, body: Record<string, unknown>, headers: Record<string, string>, error: unknown, learn: (terms: PaymentTerms) => void) {
    if (!(error instanceof MarketplaceError) || error.code !== 'payment_required' || !error.detail.terms) throw error;
    const terms = error.detail.terms as PaymentTerms;
    if (terms.purpose !== 'hold' || micros(terms.amount) > this.#maxMicros)
      throw new MarketplaceError(
        402,
        'payment_required',
        `the marketplace asks a hold of ${terms.amount}, more than this client may pay (${this.#options.maxPayment})`,
        { terms },
      );
    learn(terms);
    return this.#caller('POST', path, body, { ...headers, 'x-ledger-payment': signHoldForTerms(this.#options.key, terms) });
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
    const response = await this.#send(method, new URL(path, this.#options.baseUrl), { headers, ...(body === undefined ? {} : { body }) });
    const answer = (response.json ?? {}) as Json;
    if (response.status >= 200 && response.status < 300 && answer.ok === true) return answer.data;
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

/** The reasons of a 402 refusing a payment made from terms the marketplace no longer offers. */
const termsChanged = new Set(['payment_wrong_amount', 'payment_wrong_ref', 'payment_wrong_payee', 'payment_outlives_terms']);

function micros(text: string): bigint {
  const parsed = parseAmount(text, { allowZero: true });
  if (!parsed.ok) throw new TypeError(parsed.reason);
  return parsed.micros;
}
