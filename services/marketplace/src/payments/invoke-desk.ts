import { canonicalHash } from '@platform/kit/canonical-json';
import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { JsonClient } from '@platform/kit/http/json-client';
import { monotonicUuidv7 } from '@platform/kit/ids';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InvocationTable, ListingTable, MarketplaceSchema } from '../db/schema.ts';
import { type HostedCalls, hostedEndpoint } from '../hosting/hosted-calls.ts';
import type { ManifestOperation } from '../listings/manifest-types.ts';
import type { MarketplaceMetrics } from '../metrics.ts';
import { invokeRef, requestDigest } from './binding.ts';
import type { CallLedger } from './call-ledger.ts';
import { type CallOutcome, type CallRequest, finishedInvocation, keyReused, outcomeOf } from './call-outcome.ts';
import { type InvocationsRepository, newInvocation } from './invocations.repository.ts';
import { ListingCache } from './listing-cache.ts';
import { callCapMicros, costMicros, money, operationOf } from './pricing.ts';
import { callProvider, firstProblem, type ProviderOutcome, validatorFor } from './provider-call.ts';
import type { Quotes } from './quotes.ts';
import { PaymentRefused, type SettlementGateway } from './settlement-gateway.ts';
import type { Signatures } from './signatures.ts';
import type { TabDesk } from './tab-desk.ts';
import { checkPayment, type PaymentTerms, paymentRequired, refusedHold } from './terms.ts';

/** Extra seconds a hold outlives its provider call: time to capture after a slow answer. */
const holdMarginSeconds = 120;

/**
 * Paying for a call, hold-serve-capture: the caller's signed intent places a settlement hold for the call's cap,
 * the provider is called, only what it reports (capped) is captured and the rest goes back, in one settlement
 * capture; a provider that fails or times out costs nothing (the hold is released). Nothing is charged before
 * the call is served, and the caller's idempotency key (or, without one, the payment intent's nonce) makes a
 * retry return the original outcome: of racing retries one claims the key and the others wait for its answer.
 */
export class InvokeDesk {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #settlement: SettlementGateway;
  readonly #providers: JsonClient;
  readonly #hosted: HostedCalls;
  readonly #signatures: Signatures;
  readonly #quotes: Quotes;
  readonly #tabs: TabDesk;
  readonly #ledger: CallLedger;
  readonly #metrics: MarketplaceMetrics;
  readonly #settings: { providerTimeoutMs: number; paymentTtlSeconds: number; settlementUrl: string };
  readonly invocations: InvocationsRepository;
  readonly listings: ListingCache;
  /** Calls this process is serving, by invocation id: a racing retry waits for the first. */
  readonly #inFlight = new Map<string, Promise<CallOutcome>>();

  constructor(options: {
    db: Kysely<MarketplaceSchema>;
    clock: Clock;
    logger: Logger;
    settlement: SettlementGateway;
    providers: JsonClient;
    /** Calls to hosted listings' Workers (hosting/hosted-calls.ts). */
    hosted: HostedCalls;
    signatures: Signatures;
    quotes: Quotes;
    invocations: InvocationsRepository;
    ledger: CallLedger;
    tabs: TabDesk;
    metrics: MarketplaceMetrics;
    settings: { providerTimeoutMs: number; paymentTtlSeconds: number; settlementUrl: string };
  }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#settlement = options.settlement;
    this.#providers = options.providers;
    this.#hosted = options.hosted;
    this.#signatures = options.signatures;
    this.#quotes = options.quotes;
    this.#tabs = options.tabs;
    this.#ledger = options.ledger;
    this.#metrics = options.metrics;
    this.#settings = options.settings;
    this.invocations = options.invocations;
    this.listings = new ListingCache(options.db);
  }

  listing(id: string): Promise<ListingTable> {
    return this.listings.active(id);
  }

  /** The terms of a call: the cap it is held for and the ref that binds the payment to it. */
  terms(
    listing: ListingTable,
    operation: ManifestOperation,
    args: unknown,
    quote: { id: string; max_total_micros: bigint } | undefined,
    caller: string,
  ): PaymentTerms {
    const cap = quote?.max_total_micros ?? callCapMicros(operation);
    const expiresAt = new Date(this.#clock.now().getTime() + this.#settings.paymentTtlSeconds * 1000);
    return {
      scheme: 'platform-settlement-hold-v1',
      pay_to: this.#settlement.did,
      amount: money(cap),
      purpose: 'hold',
      ref: invokeRef({ serviceId: listing.id, operation: operation.name, args, quoteId: quote?.id ?? null, caller }),
      expires_at: expiresAt.toISOString(),
      settlement_url: this.#settings.settlementUrl,
      for: { service_id: listing.id, operation: operation.name, quote_id: quote?.id ?? null, max_units: operation.pricing.max_units },
    };
  }

  call(request: CallRequest): Promise<CallOutcome> {
    return this.#signatures.during(() => this.#call(request));
  }

  async #call(request: CallRequest): Promise<CallOutcome> {
    const { listing } = request;
    const operation = operationOf(listing, request.operation);
    const args = request.args ?? {};
    const validate = validatorFor(listing.manifest_hash, operation.name, 'input', operation.input_schema);
    if (!validate(args))
      throw new ServiceError('invalid_request', `args do not match the operation’s input schema: ${firstProblem(validate)}`, { details: { field: 'args' } });
    if (request.payment?.rail === 'voucher')
      return this.#tabs.call(listing, operation, args, request, (invocation) => this.#serve(listing, operation, args, invocation));
    const quote = request.quoteId === undefined ? undefined : await this.#quotes.forCall(request.quoteId, listing, operation.name, request.caller);
    const requestHash = canonicalHash({ service: listing.id, operation: operation.name, args, quote: quote?.id ?? null });
    if (request.idempotencyKey !== undefined) {
      // A key already used answers (or refuses) before any payment is looked at.
      const earlier = await this.invocations.byKey(request.caller, request.idempotencyKey);
      if (earlier) return this.#replay(earlier, requestHash);
    }
    const terms = this.terms(listing, operation, args, quote, request.caller);
    const cap = quote?.max_total_micros ?? callCapMicros(operation);
    const free = cap === 0n;
    if (!free && request.payment === undefined)
      throw paymentRequired(terms, `this call must be paid: sign a hold of ${terms.amount} for ${terms.pay_to} and send it as X-Ledger-Payment`);
    const payment = free ? undefined : checkPayment((request.payment as { wire: string }).wire, terms, request.caller, this.#clock.now());
    const key = request.idempotencyKey ?? (payment ? `intent:${payment.intent.nonce}` : '');
    const now = this.#clock.now();
    const invocation = newInvocation({
      id: monotonicUuidv7(now.getTime()),
      listing_id: listing.id,
      operation: operation.name,
      caller_did: request.caller,
      idempotency_key: key,
      request_hash: requestHash,
      rail: 'hold',
      quote_id: quote?.id ?? null,
      cap_micros: cap,
      request_digest: requestDigest({ serviceId: listing.id, operation: operation.name, args }),
      started_at: now,
    });
    if (!(await this.#ledger.claim(invocation))) {
      const existing = await this.invocations.byKey(invocation.caller_did, invocation.idempotency_key);
      if (!existing) throw new Error('an idempotency key was claimed and then vanished');
      return this.#replay(existing, invocation.request_hash);
    }
    const running = this.#holdServeCapture(listing, operation, args, invocation, terms, payment?.wire);
    this.#inFlight.set(invocation.id, running);
    try {
      return await running;
    } finally {
      this.#inFlight.delete(invocation.id);
    }
  }

  /** A second request with a claimed key: the first one's outcome, once it has one. */
  async #replay(existing: InvocationTable, requestHash: string): Promise<CallOutcome> {
    if (existing.request_hash !== requestHash) throw keyReused(existing.id);
    if (existing.status === 'pending') {
      const running = this.#inFlight.get(existing.id);
      if (running) return running;
      throw new ServiceError('conflict', 'a call with this Idempotency-Key is still being served; retry shortly', {
        retryable: true,
        details: { reason: 'invocation_in_progress', invocation_id: existing.id },
      });
    }
    return outcomeOf(existing);
  }

  async #holdServeCapture(
    listing: ListingTable,
    operation: ManifestOperation,
    args: unknown,
    invocation: InvocationTable,
    terms: PaymentTerms,
    wire: string | undefined,
  ): Promise<CallOutcome> {
    let holdId: string | undefined;
    if (wire !== undefined) {
      try {
        const placed = await this.#settlement.placeHold(wire, {
          amount: terms.amount,
          ref: terms.ref,
          expiresInSeconds: Math.ceil(this.#timeoutMs(listing, operation) / 1000) + holdMarginSeconds,
          idempotencyKey: `mkt:${invocation.id}:hold`,
        });
        holdId = placed.hold.id;
      } catch (error) {
        // Nothing moved: free the key, so the caller can pay again (a new intent) under it.
        await this.invocations.forget(invocation.id);
        if (error instanceof PaymentRefused) {
          this.#metrics.holdRefused();
          throw refusedHold(terms, error);
        }
        throw error;
      }
      // Noted with the outcome, not now: one write less per call. A hold whose call is interrupted before then
      // returns to the caller when it expires (the call's timeout and two minutes).
      invocation.hold_id = holdId;
      this.#metrics.holdPlaced();
    }
    let settled: { seq: bigint; captured: bigint } | undefined;
    let served: ProviderOutcome;
    let cost: bigint;
    try {
      served = await this.#serve(listing, operation, args, invocation);
      cost = served.ok ? costMicros(operation, served.units, invocation.cap_micros) : 0n;
      // Not settled now (settlement unreachable): the cost stays, and the sweep settles it with the same keys.
      settled = holdId === undefined ? undefined : await this.#settleHold(invocation.id, holdId, cost);
    } finally {
      // Settled, or the sweep's now (it counts what it finds open).
      if (holdId !== undefined) this.#metrics.holdClosed();
    }
    return this.#finish(invocation, served, settled?.captured ?? cost, settled?.seq ?? null);
  }

  /** Calls the provider for an invocation: the developer's server, or for a hosted listing its running Worker. */
  async #serve(listing: ListingTable, operation: ManifestOperation, args: unknown, invocation: InvocationTable): Promise<ProviderOutcome> {
    const endpoint = listing.manifest.endpoint;
    const served = await callProvider(endpoint === undefined ? this.#hosted.client : this.#providers, this.#signatures, {
      endpoint: endpoint ?? hostedEndpoint(listing.hosted_deployment_id),
      manifestHash: listing.manifest_hash,
      operation,
      invocationId: invocation.id,
      callerDid: invocation.caller_did,
      args,
      timeoutMs: this.#timeoutMs(listing, operation),
      now: () => performance.now(),
    });
    this.#metrics.providerAnswered(endpoint === undefined ? 'hosted' : 'external', served.latencyMs / 1000);
    return served;
  }

  #timeoutMs(listing: ListingTable, operation: ManifestOperation): number {
    return Math.min(operation.timeout_ms ?? listing.manifest.timeout_ms, this.#settings.providerTimeoutMs);
  }

  /**
   * Captures what the call cost (settlement returns the rest of the hold to the caller in the same movement), or
   * releases it all. Returns the settlement seq that closed the hold; undefined when settlement could not be
   * reached now (the hold stays open and the sweep settles it with the same idempotency key: never twice).
   */
  async #settleHold(invocationId: string, holdId: string, cost: bigint): Promise<{ seq: bigint; captured: bigint } | undefined> {
    try {
      return await this.#settlement.settle(holdId, cost, `mkt:${invocationId}`);
    } catch (error) {
      this.#logger.warn({ err: error, invocation: invocationId, hold: holdId }, 'settling a hold failed; the sweep will settle it');
      return undefined;
    }
  }

  async #finish(invocation: InvocationTable, served: ProviderOutcome, cost: bigint, settleSeq: bigint | null): Promise<CallOutcome> {
    const finished = finishedInvocation({ ...invocation, capture_seq: settleSeq }, served, cost, this.#clock.now());
    await this.#ledger.finish(finished, { success: served.ok, providerFailure: !served.ok, latencyMs: finished.latency_ms ?? 0 });
    return outcomeOf(finished);
  }
}
