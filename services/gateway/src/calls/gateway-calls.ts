import type { Clock } from '@platform/kit/clock';
import { modelCallAttributes, modelUsageAttributes } from '@platform/kit/observability/gen-ai-spans';
import { inSpan, SpanKind } from '@platform/kit/observability/tracing';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { GatewaySettings } from '../config.ts';
import type { LedgerKind } from '../db/schema.ts';
import { badRequest, GatewayError } from '../http/openai-errors.ts';
import { callerHeadersOf, type PlatformHeaders } from '../http/platform-headers.ts';
import { formatCredit } from '../metering/credit.ts';
import type { Debit, Meter, MeteredCall, Reservation, Usage } from '../metering/meter.ts';
import { type Projection, projectChat, projectEmbedding } from '../metering/projection.ts';
import type { CallOutcome, GatewayMetrics, UpstreamErrorKind } from '../metrics.ts';
import { isModelId, type ModelPolicy } from '../models/model-policy.ts';
import type { RateCardBook } from '../rate-cards/rate-card-book.ts';
import type { DrainSlots } from '../streaming/drain-slots.ts';
import { relayStream, type StreamEnd } from '../streaming/stream-relay.ts';
import { usageOfBody } from '../streaming/usage.ts';
import type { CollectedAnswer, UpstreamClient, UpstreamPath } from '../upstream/upstream-client.ts';
import { type ChatBody, type EmbeddingBody, rawBodyOf, upstreamBody } from './request-bodies.ts';

export interface GatewayCallDeps {
  settings: GatewaySettings;
  policy: ModelPolicy;
  book: RateCardBook;
  meter: Meter;
  /** Undefined when GATEWAY_UPSTREAM_URL is not set: calls then get 503. */
  upstream: UpstreamClient | undefined;
  drains: DrainSlots;
  clock: Clock;
  logger: Logger;
  /** Where calls, upstream latency and errors are counted. */
  metrics: GatewayMetrics;
}

/** How a served call ended (its metrics' outcome) and the usage the upstream reported (its span's tokens). */
interface Served {
  outcome: CallOutcome;
  usage: Usage | undefined;
}

/** One call as planned from its request, before anything is reserved or sent. */
interface Plan {
  headers: PlatformHeaders;
  /** As the caller named it. */
  model: string;
  kind: LedgerKind;
  path: UpstreamPath;
  stream: boolean;
  upstream: UpstreamClient;
  apiKey: string;
  body: Buffer;
  /** The gateway asked the upstream for a usage chunk the client did not ask for, so it withholds that chunk. */
  hideUsageChunk: boolean;
  /** Undefined for BYO calls: not metered. */
  metering: { call: MeteredCall; projection: Projection } | undefined;
}

const notConfigured = new GatewayError(
  503,
  'service_unavailable',
  'upstream_not_configured',
  'no upstream provider is configured: set GATEWAY_UPSTREAM_URL (and GATEWAY_UPSTREAM_API_KEY) and restart the gateway',
  { noRetry: true },
);

export function costHeaders(debit: Debit): Record<string, string> {
  const remaining = debit.limitUnits > debit.spentUnits ? debit.limitUnits - debit.spentUnits : 0n;
  return {
    'x-platform-cost-credit': formatCredit(debit.costUnits),
    'x-platform-daily-spent-credit': formatCredit(debit.spentUnits),
    'x-platform-daily-remaining-credit': formatCredit(remaining),
    'x-platform-rate-table-version': String(debit.rateTableVersion),
  };
}

/**
 * The metered proxy: check the caller, price the model, reserve the most the call can cost, forward it, then
 * settle to the upstream's reported usage (or release when the upstream refused or failed).
 */
export class GatewayCalls {
  readonly #deps: GatewayCallDeps;
  #inFlight = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(deps: GatewayCallDeps) {
    this.#deps = deps;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Resolves once no call is in flight, drains included; shutdown then waits for the bookings still committing
   * (`budget.flushed()` in app.ts) before the database closes.
   */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  async chat(request: FastifyRequest<{ Body: ChatBody }>, reply: FastifyReply): Promise<void> {
    const body = request.body;
    await this.#counted(request, body.model, (model) => this.#serve(this.#plan(request, 'chat', body.stream === true, body), model, reply));
  }

  async embeddings(request: FastifyRequest<{ Body: EmbeddingBody }>, reply: FastifyReply): Promise<void> {
    await this.#counted(request, request.body.model, (model) => this.#serve(this.#plan(request, 'embedding', false, request.body), model, reply));
  }

  /** Runs a call and counts how it ended, by model (a configured id, else `other`) and slot. */
  async #counted(request: FastifyRequest, model: string, run: (model: string) => Promise<CallOutcome>): Promise<void> {
    const { metrics } = this.#deps;
    const label = metrics.model(model);
    const slot = callerHeadersOf(request).platform.slot;
    let outcome: CallOutcome = 'error';
    try {
      outcome = await run(label);
    } catch (error) {
      outcome = refusedOutcome(error);
      throw error;
    } finally {
      metrics.call(label, slot, outcome);
    }
  }

  #plan(request: FastifyRequest, kind: LedgerKind, stream: boolean, body: ChatBody | EmbeddingBody): Plan {
    const { settings, policy, book } = this.#deps;
    const { platform: headers, userKey } = callerHeadersOf(request);
    if (!isModelId(body.model))
      throw badRequest('invalid_model', `model must be of the form accounts/<provider>/models/<model>, got "${body.model.slice(0, 80)}"`, 'model');
    const upstream = this.#deps.upstream;
    if (!upstream) throw notConfigured;
    const raw = rawBodyOf(request);
    const path: UpstreamPath = kind === 'chat' ? '/chat/completions' : '/embeddings';
    const base = { headers, model: body.model, kind, path, stream, upstream };
    if (headers.byo) {
      const forwarded = upstreamBody(raw, body, { naming: settings.upstreamModelNaming, addIncludeUsage: false, addMaxTokens: undefined });
      return { ...base, apiKey: userKey as string, body: forwarded, hideUsageChunk: false, metering: undefined };
    }
    const decision = kind === 'chat' ? policy.decideChat(headers.slot, body.model) : policy.decideEmbedding(body.model);
    if (!decision.allowed) throw new GatewayError(403, 'permission_error', 'model_not_whitelisted', decision.reason, { param: 'model' });
    const card = book.current();
    const price = card.prices.get(body.model);
    if (!price)
      throw badRequest(
        'model_not_priced',
        `${body.model} has no price in rate card v${card.version}; the gateway does not forward calls it cannot meter`,
        'model',
      );
    const projection = kind === 'chat' ? projectChat(raw.length, body as ChatBody, settings.defaultMaxTokens) : projectEmbedding(raw.length);
    const addIncludeUsage = stream && (body as ChatBody).stream_options?.include_usage !== true;
    const forwarded = upstreamBody(raw, body, { naming: settings.upstreamModelNaming, addIncludeUsage, addMaxTokens: projection.addMaxTokens });
    const call: MeteredCall = { headers, model: body.model, kind, streamed: stream, card, price };
    return { ...base, apiKey: settings.upstreamApiKey, body: forwarded, hideUsageChunk: addIncludeUsage, metering: { call, projection } };
  }

  async #serve(plan: Plan, model: string, reply: FastifyReply): Promise<CallOutcome> {
    if (this.#inFlight >= this.#deps.settings.maxInFlight)
      throw new GatewayError(503, 'service_unavailable', 'overloaded', `the gateway is serving ${this.#inFlight} calls (GATEWAY_MAX_IN_FLIGHT); retry shortly`);
    this.#inFlight++;
    let reservation: Reservation | undefined;
    const operation = plan.kind === 'chat' ? 'chat' : 'embeddings';
    try {
      // The model call's span (GenAI conventions): what was asked, then the tokens the answer used and what they cost.
      return await inSpan(
        `${operation} ${plan.model}`,
        { kind: SpanKind.CLIENT, attributes: () => modelCallAttributes({ operation, model: plan.model, slot: plan.headers.slot }) },
        async (span) => {
          if (plan.metering) reservation = await this.#deps.meter.reserve(plan.metering.call, plan.metering.projection);
          const served = plan.stream ? await this.#stream(plan, model, reservation, reply) : await this.#whole(plan, model, reservation, reply);
          const usage = served.usage;
          if (usage !== undefined && span.isRecording())
            span.setAttributes(
              modelUsageAttributes({
                inputTokens: usage.inputTokens,
                outputTokens: usage.outputTokens,
                ...(reservation && { costCredit: formatCredit(reservation.costOf(usage)) }),
              }),
            );
          return served.outcome;
        },
      );
    } finally {
      // Anything that ended before booking (a refusal, a timeout, an error) gives the reservation back.
      if (reservation && !reservation.closed) reservation.release();
      if (--this.#inFlight === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
    }
  }

  async #whole(plan: Plan, model: string, reservation: Reservation | undefined, reply: FastifyReply): Promise<Served> {
    const { metrics } = this.#deps;
    const sentAt = performance.now();
    const answer = await plan.upstream.call(plan.path, plan.body, plan.apiKey).catch((error: unknown) => {
      this.#upstreamFailed(model, error);
      throw error;
    });
    metrics.upstreamTime(model, (performance.now() - sentAt) / 1000);
    if (answer.status < 200 || answer.status > 299) return this.#forwardRefusal(answer, model, reservation, reply);
    if (!reservation) {
      reply.status(answer.status).type(answer.contentType).send(answer.body);
      return { outcome: 'ok', usage: undefined };
    }
    const usage = usageOfBody(answer.body);
    if (!usage) this.#deps.logger.warn({ model: plan.metering?.call.model }, 'upstream answer without usage: charged at its reservation');
    // Queued before the answer leaves, so this actor's next call from the client is reserved after it; the answer
    // does not wait for the commit, since the reservation already holds the budget.
    const booking = usage ? reservation.settle(usage) : reservation.chargeReservation();
    reply
      .headers(costHeaders(reservation.debitFor(usage ? reservation.costOf(usage) : reservation.units)))
      .status(answer.status)
      .type(answer.contentType)
      .send(answer.body);
    // The call ends with its answer: a booking still committing holds no place under GATEWAY_MAX_IN_FLIGHT, so a
    // database that stalls for a moment does not turn into 503s for calls the leased budget can serve. Bookings stay
    // bounded (an actor's next grant waits behind its bookings), and shutdown waits for them (app.ts).
    booking.catch((error: unknown) => this.#deps.logger.error({ err: error }, 'could not book a call'));
    return { outcome: 'ok', usage };
  }

  async #stream(plan: Plan, model: string, reservation: Reservation | undefined, reply: FastifyReply): Promise<Served> {
    const { drains, clock, settings, logger, metrics } = this.#deps;
    const sentAt = performance.now();
    const failed = (error: unknown): never => {
      this.#upstreamFailed(model, error);
      throw error;
    };
    const exchange = await plan.upstream.open(plan.path, plan.body, plan.apiKey).catch(failed);
    const status = exchange.status;
    if (status < 200 || status > 299) {
      const refusal = await plan.upstream.collect(exchange).catch(failed);
      metrics.upstreamTime(model, (performance.now() - sentAt) / 1000);
      return this.#forwardRefusal(refusal, model, reservation, reply);
    }
    reply.hijack();
    const end = await relayStream({
      exchange,
      client: reply.raw,
      reservation,
      hideUsageChunk: plan.hideUsageChunk,
      drains,
      clock,
      drainTimeoutMs: settings.drainTimeoutMs,
      logger,
    });
    if (end.upstreamEnded) metrics.upstreamTime(model, (performance.now() - sentAt) / 1000);
    if (end.upstreamFailure) metrics.upstreamError(model, end.upstreamFailure);
    return { outcome: streamOutcome(end), usage: end.usage };
  }

  /** A non-2xx answer goes back as it came, status and body, and costs nothing. */
  async #forwardRefusal(answer: CollectedAnswer, model: string, reservation: Reservation | undefined, reply: FastifyReply): Promise<Served> {
    reservation?.release();
    this.#deps.metrics.upstreamError(model, statusKind(answer.status));
    reply.status(answer.status).type(answer.contentType).send(answer.body);
    return { outcome: 'upstream_refused', usage: undefined };
  }

  /** An exchange that failed before its answer was whole (the 502 or 504 the caller gets). */
  #upstreamFailed(model: string, error: unknown): void {
    const kind = error instanceof GatewayError ? upstreamFailureKinds.get(error.code) : undefined;
    if (kind) this.#deps.metrics.upstreamError(model, kind);
  }
}

const upstreamFailureKinds = new Map<string, UpstreamErrorKind>([
  ['upstream_timeout', 'timeout'],
  ['upstream_unreachable', 'unreachable'],
  ['upstream_response_too_large', 'too_large'],
]);

function statusKind(status: number): UpstreamErrorKind {
  if (status === 429) return 'http_429';
  if (status >= 500 && status < 600) return 'http_5xx';
  return status >= 400 && status < 500 ? 'http_4xx' : 'http_other';
}

/** The outcome of a call the gateway refused or could not serve, from the error it answered with. */
function refusedOutcome(error: unknown): CallOutcome {
  if (!(error instanceof GatewayError)) return 'error';
  if (error.code === 'budget_exhausted') return 'budget_exhausted';
  if (upstreamFailureKinds.has(error.code)) return 'upstream_failed';
  if (error.status === 503) return 'unavailable';
  return error.status >= 400 && error.status < 500 ? 'rejected' : 'error';
}

function streamOutcome(end: StreamEnd): CallOutcome {
  switch (end.outcome) {
    case 'completed':
    case 'ended_without_done':
      return 'ok';
    case 'upstream_error_event':
    case 'upstream_failed':
      return 'upstream_failed';
    default:
      return 'client_gone';
  }
}
