import { deriveTokenKey } from '@platform/kit/auth/principal-token';
import type { Clock } from '@platform/kit/clock';
import { createServiceApp, type ServiceApp } from '@platform/kit/http/create-app';
import { rateLimit, type TakeResult } from '@platform/kit/http/rate-limit';
import { routeOf } from '@platform/kit/http/route-of';
import { lastEventIdHeaders, openSseSink } from '@platform/kit/http/sse';
import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import { type ServiceTracing, traceCarrier } from '@platform/kit/observability/tracing';
import type { PortRpc } from '@platform/kit/threads/port-rpc';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { rateClassFor, registerGatedRoutes, retryAfterOnUnavailable, serviceName } from '../app.ts';
import type { RateSetting } from '../config.ts';
import type { Command } from '../ledger/commands.ts';
import { limits } from '../routes/inputs.ts';
import { registerMovementRoutes } from '../routes/movement-routes.ts';
import { parseLastEventId } from '../stream/stream-route.ts';
import type { RelayAnswer, RelayedRequest, StreamNote } from './front-protocol.ts';

/*
 * The app of one front thread. It answers the routes that move money itself (HTTP, rate limit, bearer, principal
 * token, body, validation and the answer all happen here) and hands the sequencer thread only the command to
 * apply. Every other route is relayed whole to the sequencer thread's own app, which answers it exactly as it does
 * without front threads; the event stream is relayed frame by frame.
 */

export interface FrontAppDeps {
  logger: Logger;
  clock: Clock;
  /** The sequencer thread. */
  main: PortRpc;
  transportToken: string;
  agentAuthSecret: string;
  holdMaxSeconds: number;
  rates: { read: RateSetting; write: RateSetting; auth: RateSetting };
  trustProxy: boolean;
  /** This thread's HTTP metrics (relayed requests are counted by the app that answers them). */
  metrics?: ServiceMetrics;
  /** Count this thread's requests into `metrics` (the sequencer thread serves them). */
  countRequests?: boolean;
  /** This thread's tracing: its requests' server spans; a relayed request's span in the sequencer thread is their child. */
  tracing?: ServiceTracing;
}

const relayUrl = '/*';
const relayedMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** Connection-level headers of the relayed answer: this thread's connection has its own. */
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/** The front thread's Fastify app; `streams` receives the sequencer thread's stream notes. */
export function buildFrontApp(deps: FrontAppDeps): { app: ServiceApp; streams: FrontStreams } {
  const { main, clock } = deps;
  const app = createServiceApp({
    logger: deps.logger,
    bodyLimit: limits.bodyBytes,
    trustProxy: deps.trustProxy,
    api: undefined,
    ...(deps.metrics && { metrics: deps.metrics }),
    ...(deps.countRequests !== undefined && { countRequests: deps.countRequests }),
    ...(deps.tracing && { tracing: deps.tracing }),
  });
  retryAfterOnUnavailable(app);
  const classify = rateClassFor(deps.transportToken);
  // The buckets live in the sequencer thread, so a client's limit is the same whichever thread took its connection.
  // Relayed requests are counted there by the app that answers them, not here as well.
  rateLimit(app, {
    classes: deps.rates,
    classify: (request) => (routeOf(request).url === relayUrl ? undefined : classify(request)),
    clock,
    take: (className, key, count) => main.call<TakeResult>('take', { className, key, count }),
  });
  const tokenKey = deriveTokenKey(deps.agentAuthSecret, serviceName);
  registerGatedRoutes(app, { transportToken: deps.transportToken, tokenKey, clock }, (gated) => {
    registerMovementRoutes(gated, {
      sequencer: { submit: (command: Command) => main.call('submit', command) },
      reads: { receipt: (seq: number) => main.call('receipt', seq) },
      clock,
      holdMaxSeconds: deps.holdMaxSeconds,
    });
  });
  const streams = new FrontStreams(main);
  registerStreamRelay(app, streams);
  registerRelay(app, main);
  return { app, streams };
}

/** Every route this thread does not answer: the sequencer thread's app answers it, as if it had the connection. */
function registerRelay(app: ServiceApp, main: PortRpc): void {
  app.register(async (scope) => {
    // The body is passed on as bytes; the answering app parses it (and refuses a wrong content type) itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.route({
      method: [...relayedMethods],
      url: relayUrl,
      // Counted once, under its own route template, by the sequencer thread's app that answers it.
      config: { httpMetrics: false },
      handler: async (request, reply) => {
        // This thread's span in place of the caller's: the answering app's span is its child.
        const headers = { ...request.headers, ...traceCarrier() };
        delete headers['transfer-encoding'];
        const relayed: RelayedRequest = {
          method: request.method,
          url: request.raw.url ?? request.url,
          headers,
          body: request.body instanceof Buffer ? request.body : undefined,
          remoteAddress: request.socket.remoteAddress ?? '',
        };
        const answer = await main.call<RelayAnswer>('relay', relayed);
        reply.hijack();
        const out: Record<string, string | number | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !hopByHop.has(name)) out[name] = value;
        reply.raw.writeHead(answer.status, out);
        reply.raw.end(answer.body);
      },
    });
  });
}

/** `GET /v1/stream` here, fed by the sequencer thread's event hub: the same checks, the same frames. */
function registerStreamRelay(app: ServiceApp, streams: FrontStreams): void {
  app.get<{ Querystring: { last_event_id?: string } }>(
    '/v1/stream',
    { schema: { querystring: { type: 'object', properties: { last_event_id: { type: 'string', maxLength: 128 } } }, headers: lastEventIdHeaders } },
    async (request, reply) => {
      const lastEventId = parseLastEventId(request.headers['last-event-id'] ?? request.query.last_event_id);
      await streams.open(reply, lastEventId);
    },
  );
}

/** This thread's event streams, written from the sequencer thread's notes. */
export class FrontStreams {
  readonly #main: PortRpc;
  readonly #open = new Map<number, { reply: FastifyReply; started: boolean }>();
  #nextId = 1;

  constructor(main: PortRpc) {
    this.#main = main;
  }

  /** Subscribes at the hub; throws its refusal (503 when full) before anything is written. */
  async open(reply: FastifyReply, lastEventId: bigint | undefined): Promise<void> {
    const id = this.#nextId++;
    this.#open.set(id, { reply, started: false });
    reply.raw.on('close', () => {
      if (this.#open.delete(id)) this.#main.notify('streamClosed', id);
    });
    reply.raw.on('error', (error) => reply.log.debug({ err: error }, 'event stream write failed'));
    try {
      await this.#main.call('subscribe', { id, lastEventId: lastEventId?.toString() ?? null });
    } catch (error) {
      this.#open.delete(id);
      throw error;
    }
  }

  /** A note from the hub's sink for stream `id`. */
  receive(note: StreamNote): void {
    const stream = this.#open.get(note.id);
    if (!stream) return;
    const raw = stream.reply.raw;
    if (!stream.started) {
      stream.started = true;
      openSseSink(stream.reply);
    }
    if (note.op === 'write') {
      const bytes = Buffer.byteLength(note.chunk);
      raw.write(note.chunk, () => this.#main.notify('streamFlushed', { id: note.id, bytes }));
    } else if (note.op === 'end') {
      this.#open.delete(note.id);
      raw.end();
    } else {
      this.#open.delete(note.id);
      raw.destroy();
    }
  }
}
