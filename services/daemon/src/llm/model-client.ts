import type * as Http from 'node:http';
import type * as Https from 'node:https';
import { createRequire } from 'node:module';
import type { Clock } from '@platform/kit/clock';
import type { Slot } from '@platform/kit/model-labels';
import { modelCallAttributes, modelUsageAttributes } from '@platform/kit/observability/gen-ai-spans';
import { inSpan, type Span, SpanKind, startClientSpan } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import type { ServiceLink } from '../config.ts';
import { type ContentReceiver, readStreamedAnswer } from './streamed-answer.ts';

// An ES import of node:http builds the module's whole namespace, which loads fetch's undici and zlib: about 8 MB more
// resident in every idle daemon (measured), for code the daemon never runs. require() takes only what it names.
const require = createRequire(import.meta.url);
const http = require('node:http') as typeof Http;
const https = require('node:https') as typeof Https;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ModelCall {
  slot: Slot;
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  intentId?: string;
  /** The executor's sub-route for the gateway's rollups (`answer`, `step`, `chat`). */
  kindRoute?: string;
  /** Structured output: the JSON schema the answer must follow. */
  responseSchema?: { name: string; schema: Record<string, unknown> };
  temperature?: number;
  signal?: AbortSignal;
  /** Asks for the answer as a stream (`stream: true`) and hands it over piece by piece; the whole is still returned. */
  stream?: ContentReceiver;
}

export interface ModelAnswer {
  content: string;
  model: string;
}

/** Why a model call failed, with what a person should do about it; `retryable` failures were already retried. */
export class ModelCallError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryable: boolean;
  constructor(status: number, code: string, message: string, retryable: boolean) {
    super(message);
    this.name = 'ModelCallError';
    this.status = status;
    this.code = code;
    this.retryable = retryable;
  }
}

/** Gateway refusals that no retry can fix, and what they mean for the user. */
const finalRefusals: Readonly<Record<string, (message: string) => string>> = {
  budget_exhausted: (message) => `the daily model budget is spent: ${message}`,
  upstream_not_configured: () => 'the gateway has no model provider: set GATEWAY_UPSTREAM_URL on the gateway',
  gateway_disabled: () => 'the gateway is switched off (PLATFORM_GATEWAY_DISABLED)',
  model_not_whitelisted: (message) => `the gateway refused the model: ${message}`,
  model_not_priced: (message) => `the gateway cannot price the model: ${message}`,
  unauthorized: () => 'the gateway refused the daemon’s bearer (PLATFORM_GATEWAY_TOKEN)',
};

const backoffMs = [1_000, 3_000, 9_000, 27_000];

/**
 * Calls models through the metered gateway (OpenAI's chat-completions shape) with the headers it meters by: the
 * daemon's DID, the slot, the intent. node:http keep-alive, as the rest of the platform's hot paths. Timeouts and
 * backoff run on the injected clock; retryable failures (network, 5xx, overload) are tried again `retries` times.
 * With `stream` the answer comes as server-sent events (the gateway relays the upstream's) and is handed over as it
 * arrives; the timeout still covers the whole call, and a stream that breaks off is a retryable failure.
 */
export class ModelClient {
  readonly #gateway: ServiceLink | undefined;
  readonly #actorDid: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #logger: Logger;
  readonly #agent: Http.Agent;

  constructor(options: { gateway: ServiceLink | undefined; actorDid: string; clock: Clock; timeoutMs: number; retries: number; logger: Logger }) {
    this.#gateway = options.gateway;
    this.#actorDid = options.actorDid;
    this.#clock = options.clock;
    this.#timeoutMs = options.timeoutMs;
    this.#retries = options.retries;
    this.#logger = options.logger;
    const secure = options.gateway?.url.startsWith('https:') ?? false;
    this.#agent = new (secure ? https : http).Agent({ keepAlive: true, maxSockets: 16 });
  }

  get configured(): boolean {
    return this.#gateway !== undefined;
  }

  /**
   * One model call, retries included, as one span (GenAI's `chat <model>`: the model, slot and limits asked, the tokens
   * and cost the gateway reported); each attempt is an HTTP client span below it.
   */
  complete(call: ModelCall): Promise<ModelAnswer> {
    const attributes = modelCallAttributes({
      operation: 'chat',
      model: call.model,
      slot: call.slot,
      maxTokens: call.maxTokens,
      ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
    });
    return inSpan(`chat ${call.model}`, { kind: SpanKind.CLIENT, attributes }, (span) => this.#attempts(call, span));
  }

  async #attempts(call: ModelCall, span: Span): Promise<ModelAnswer> {
    if (this.#gateway === undefined) throw new ModelCallError(503, 'gateway_not_configured', 'no model gateway is configured: set PLATFORM_GATEWAY_URL', false);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once(this.#gateway, call, span);
      } catch (error) {
        const failure = error instanceof ModelCallError ? error : new ModelCallError(0, 'internal', String(error), false);
        if (!failure.retryable || attempt >= this.#retries || call.signal?.aborted) throw failure;
        this.#logger.warn({ code: failure.code, status: failure.status, attempt: attempt + 1 }, 'model call failed; retrying');
        await this.#clock.sleep(backoffMs[Math.min(attempt, backoffMs.length - 1)] as number, call.signal);
        if (call.signal?.aborted) throw failure;
      }
    }
  }

  close(): void {
    this.#agent.destroy();
  }

  #once(gateway: ServiceLink, call: ModelCall, span: Span): Promise<ModelAnswer> {
    const body = JSON.stringify({
      model: call.model,
      messages: call.messages,
      max_tokens: call.maxTokens,
      ...(call.stream ? { stream: true } : {}),
      ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
      ...(call.responseSchema
        ? { response_format: { type: 'json_schema', json_schema: { name: call.responseSchema.name, schema: call.responseSchema.schema, strict: true } } }
        : {}),
    });
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'x-platform-actor-did': this.#actorDid,
      'x-platform-slot': call.slot,
    };
    if (gateway.token !== '') headers.authorization = `Bearer ${gateway.token}`;
    if (call.intentId) headers['x-platform-intent-id'] = call.intentId;
    if (call.kindRoute) headers['x-platform-kind-route'] = call.kindRoute;
    const target = new URL(`${gateway.url}/chat/completions`);
    const client = target.protocol === 'https:' ? https : http;
    const attempt = startClientSpan('POST', target, headers);
    let status: number | undefined;
    return new Promise<ModelAnswer>((resolveAnswer, rejectAnswer) => {
      const resolve = (answer: ModelAnswer) => {
        attempt.end(status);
        resolveAnswer(answer);
      };
      const reject = (error: ModelCallError) => {
        attempt.end(status, error);
        rejectAnswer(error);
      };
      const stop = new AbortController();
      const finish = (outcome: () => void) => {
        if (stop.signal.aborted) return;
        // A reason of our own: abort() without one builds a DOMException with a stack, measurable on every call.
        stop.abort('settled');
        call.signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const request = client.request(target, { method: 'POST', agent: this.#agent, headers }, (response) => {
        status = response.statusCode ?? 0;
        const cost = response.headers['x-platform-cost-credit'];
        if (typeof cost === 'string') span.setAttributes(modelUsageAttributes({ costCredit: cost }));
        // A refusal is a JSON body even to a stream request; only a 2xx event stream is read as one.
        if (call.stream && status >= 200 && status < 300 && response.headers['content-type']?.startsWith('text/event-stream')) {
          readStreamedAnswer(response, call.model, call.stream).then(
            (outcome) =>
              finish(() =>
                'failure' in outcome
                  ? reject(new ModelCallError(502, outcome.failure.code, `the model's answer broke off: ${outcome.failure.message}`, true))
                  : resolve(outcome),
              ),
            (error: Error) => finish(() => reject(new ModelCallError(0, 'network', `the gateway connection broke: ${error.message}`, true))),
          );
          return;
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => finish(() => reject(new ModelCallError(0, 'network', `the gateway connection broke: ${error.message}`, true))));
        response.on('end', () =>
          finish(() => {
            const outcome = answerOf(status ?? 0, Buffer.concat(chunks).toString('utf8'), call.model, span);
            if (outcome instanceof ModelCallError) reject(outcome);
            else resolve(outcome);
          }),
        );
      });
      const onAbort = () => {
        request.destroy();
        finish(() => reject(new ModelCallError(0, 'aborted', 'the model call was abandoned', false)));
      };
      call.signal?.addEventListener('abort', onAbort, { once: true });
      if (call.signal?.aborted) onAbort();
      void this.#clock.sleep(this.#timeoutMs, stop.signal).then(() => {
        if (stop.signal.aborted) return;
        request.destroy();
        finish(() => reject(new ModelCallError(504, 'timeout', `the model did not answer within ${this.#timeoutMs} ms`, true)));
      });
      request.on('error', (error: NodeJS.ErrnoException) =>
        finish(() => reject(new ModelCallError(0, 'network', `the gateway is unreachable: ${error.code ?? error.message}`, true))),
      );
      request.end(body);
    });
  }
}

/** The answer in a gateway response, or why there is none; the tokens it reports go on the call's span. */
function answerOf(status: number, text: string, model: string, span: Span): ModelAnswer | ModelCallError {
  let parsed: {
    choices?: { message?: { content?: unknown } }[];
    model?: unknown;
    error?: { message?: unknown; code?: unknown };
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  };
  try {
    parsed = JSON.parse(text);
  } catch {
    return new ModelCallError(status, 'bad_answer', `the gateway answered ${status} with a body that is not JSON`, status >= 500);
  }
  if (status >= 200 && status < 300) {
    const { prompt_tokens: input, completion_tokens: output } = parsed.usage ?? {};
    span.setAttributes(
      modelUsageAttributes({
        ...(typeof input === 'number' && { inputTokens: input }),
        ...(typeof output === 'number' && { outputTokens: output }),
        ...(typeof parsed.model === 'string' && { responseModel: parsed.model }),
      }),
    );
    const content = parsed.choices?.[0]?.message?.content;
    if (typeof content !== 'string') return new ModelCallError(status, 'bad_answer', 'the model answered without message content', true);
    return { content, model: typeof parsed.model === 'string' ? parsed.model : model };
  }
  const code = typeof parsed.error?.code === 'string' ? parsed.error.code : status === 401 ? 'unauthorized' : `http_${status}`;
  const message = typeof parsed.error?.message === 'string' ? parsed.error.message : `HTTP ${status}`;
  const final = finalRefusals[code];
  if (final) return new ModelCallError(status, code, final(message), false);
  const retryable = status >= 500 || status === 429 || status === 408;
  return new ModelCallError(status, code, `the model call failed (${status} ${code}): ${message}`, retryable);
}
