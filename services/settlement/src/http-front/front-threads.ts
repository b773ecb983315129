import { EventEmitter } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { SseSink } from '@platform/kit/http/sse';
import type { Listener } from '@platform/kit/lifecycle';
import type { ThreadMetrics } from '@platform/kit/observability/metrics';
import { PortRpc } from '@platform/kit/threads/port-rpc';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Command } from '../ledger/commands.ts';
import type { EventHub, Subscription } from '../stream/event-hub.ts';
import type { FrontSettings, RelayAnswer, RelayedRequest } from './front-protocol.ts';

/*
 * HTTP on several threads, one writer. Front threads (front-thread.ts) each listen on the service's port with
 * SO_REUSEPORT, so the kernel spreads connections over them, and do a pay's HTTP work themselves: parsing, rate
 * limit, bearer, principal token, validation, the idempotency hash and the answer. This thread, the sequencer's,
 * only applies and commits commands, as before: the single writer, its lease and its guarantees are unchanged,
 * and commands reach it in the order the front threads send them. Every other route is relayed to this thread's
 * own app (app.inject with the client's address), which answers it exactly as it does when it listens itself.
 */

export interface FrontThreadsOptions {
  count: number;
  settings: FrontSettings;
  /** This thread's app: answers relayed requests. */
  app: FastifyInstance;
  submit: (command: Command) => Promise<unknown>;
  receipt: (seq: number) => Promise<unknown>;
  take: (className: string, key: string, count?: number) => unknown;
  hub: EventHub;
  logger: Logger;
  /** Threads started again after one stopped unexpectedly, over the process's life, before giving up. Default 3 per thread. */
  maxRestarts?: number;
  /** Called once when a thread stopped and could not be replaced (restarts used up, or the new one failed): the process should stop. */
  onGiveUp?: (reason: string) => void;
}

interface Front {
  worker: Worker;
  rpc: PortRpc;
  streams: Map<number, RemoteSink>;
}

/** The front threads as the service's listener (kit `serve`): listen starts them, close drains and ends them. */
export class FrontThreads implements Listener {
  readonly #options: FrontThreadsOptions;
  readonly #fronts: Front[] = [];
  #closing = false;
  #address: { host: string; port: number } | undefined;
  #restarts = 0;
  #gaveUp = false;

  constructor(options: FrontThreadsOptions) {
    this.#options = options;
  }

  /** Starts the threads; the first binds the port (a free one for 0), the others bind the same. */
  async listen(host: string, port: number): Promise<number> {
    const bound = await claimPort(host, port);
    this.#address = { host, port: bound };
    try {
      for (let i = 0; i < this.#options.count; i++) {
        await this.#start({ host, port: bound });
      }
    } catch (error) {
      // A port taken, or a thread that failed to start: the threads already running would keep the process alive.
      await this.close();
      throw error;
    }
    return bound;
  }

  /** The running threads (for tests and diagnostics). */
  get threads(): readonly Worker[] {
    return this.#fronts.map((front) => front.worker);
  }

  /** Each running thread's metrics (its HTTP requests), for this thread's `/metrics`; a thread that fails to answer is left out. */
  threadMetrics(): Promise<ThreadMetrics[]> {
    return Promise.all(this.#fronts.map((front) => front.rpc.call<ThreadMetrics>('metrics', null).catch((): ThreadMetrics => [])));
  }

  /** False once a thread stopped and could not be replaced: the service is degraded and should be restarted. */
  get healthy(): boolean {
    return !this.#gaveUp;
  }

  /** Stops accepting on every thread, lets in-flight requests finish, then ends the threads. */
  async close(): Promise<void> {
    this.#closing = true;
    // Open event streams would hold the threads' servers open: end them first (clients reconnect with Last-Event-ID).
    await this.#options.hub.stop();
    await Promise.all(
      this.#fronts.map(async (front) => {
        await front.rpc.call('close', null).catch(() => undefined);
        front.rpc.close();
        await front.worker.terminate();
      }),
    );
  }

  /** Starts a thread and has it listen; it counts among the threads only once it accepts connections. */
  async #start(address: { host: string; port: number }): Promise<Front> {
    const { logger } = this.#options;
    const worker = new Worker(new URL('./front-thread.ts', import.meta.url), { workerData: this.#options.settings });
    const streams = new Map<number, RemoteSink>();
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    const rpc: PortRpc = new PortRpc(worker, {
      ready: () => markReady(),
      submit: (command: Command) => this.#options.submit(command),
      receipt: (seq: number) => this.#options.receipt(seq),
      take: ({ className, key, count }: { className: string; key: string; count?: number }) => this.#options.take(className, key, count),
      relay: (request: RelayedRequest) => this.#relay(request),
      subscribe: ({ id, lastEventId }: { id: number; lastEventId: string | null }) => this.#subscribe(rpc, streams, id, lastEventId),
      streamFlushed: ({ id, bytes }: { id: number; bytes: number }) => streams.get(id)?.flushed(bytes),
      streamClosed: (id: number) => streams.get(id)?.closedByClient(),
    });
    const front: Front = { worker, rpc, streams };
    const failed = new Promise<never>((_resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`front thread exited with code ${code} before it was ready`)));
    });
    await Promise.race([ready, failed]);
    worker.on('error', (error) => logger.error({ err: error }, 'front thread failed'));
    let admitted = false;
    worker.once('exit', (code) => {
      rpc.close();
      for (const sink of streams.values()) sink.closedByClient();
      const index = this.#fronts.indexOf(front);
      if (index >= 0) this.#fronts.splice(index, 1);
      if (admitted && !this.#closing) void this.#replace(code);
    });
    try {
      await rpc.call<number>('listen', address);
    } catch (error) {
      // A thread that could not listen is stopped here and not replaced: the caller reports the failure.
      await worker.terminate();
      throw error;
    }
    admitted = true;
    this.#fronts.push(front);
    return front;
  }

  /**
   * A thread stopped on its own (an uncaught error, or it exited): its listener and connections are gone, and the
   * port would be served by fewer threads without anyone knowing. Start another in its place on the same port, a
   * bounded number of times; past that, or if the new one fails, give up loudly so the process is restarted whole.
   */
  async #replace(code: number): Promise<void> {
    const { logger } = this.#options;
    const limit = this.#options.maxRestarts ?? 3 * this.#options.count;
    if (this.#restarts >= limit) return this.#giveUp(`a front thread stopped (exit code ${code}) after ${limit} restarts`);
    this.#restarts++;
    logger.error({ code, restart: this.#restarts, of: limit }, 'a front thread stopped; starting another in its place');
    try {
      const front = await this.#start(this.#address as { host: string; port: number });
      if (this.#closing) await front.worker.terminate();
    } catch (error) {
      this.#giveUp(`a front thread stopped and its replacement failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  #giveUp(reason: string): void {
    if (this.#gaveUp || this.#closing) return;
    this.#gaveUp = true;
    this.#options.logger.fatal({ threads: this.#fronts.length, of: this.#options.count }, reason);
    this.#options.onGiveUp?.(reason);
  }

  async #relay(request: RelayedRequest): Promise<RelayAnswer> {
    const response = await this.#options.app.inject({
      method: request.method as 'GET',
      url: request.url,
      headers: request.headers as Record<string, string>,
      payload: request.body === undefined ? undefined : Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength),
      remoteAddress: request.remoteAddress,
    });
    return { status: response.statusCode, headers: response.headers, body: response.rawPayload };
  }

  #subscribe(rpc: PortRpc, streams: Map<number, RemoteSink>, id: number, lastEventId: string | null): null {
    const sink = new RemoteSink(rpc, id, () => streams.delete(id));
    streams.set(id, sink);
    try {
      sink.subscription = this.#options.hub.subscribe(lastEventId === null ? undefined : BigInt(lastEventId), () => sink);
    } catch (error) {
      streams.delete(id);
      throw error;
    }
    return null;
  }
}

/** An event stream held by a front thread, as the hub sees it: writes go there, its socket's progress comes back. */
class RemoteSink extends EventEmitter implements SseSink {
  subscription: Subscription | undefined;
  readonly #rpc: PortRpc;
  readonly #id: number;
  readonly #forget: () => void;
  #inFlight = 0;
  #ended = false;

  constructor(rpc: PortRpc, id: number, forget: () => void) {
    super();
    this.#rpc = rpc;
    this.#id = id;
    this.#forget = forget;
  }

  /** Bytes sent to the front thread that its socket has not yet taken: what a slow reader costs. */
  get writableLength(): number {
    return this.#inFlight;
  }

  write(chunk: string): boolean {
    if (this.#ended) return false;
    this.#inFlight += Buffer.byteLength(chunk);
    this.#rpc.notify('stream', { id: this.#id, op: 'write', chunk });
    return this.#inFlight < highWaterMark;
  }

  end(): void {
    this.#finish('end');
  }

  destroy(): void {
    this.#finish('destroy');
  }

  flushed(bytes: number): void {
    const wasFull = this.#inFlight >= highWaterMark;
    this.#inFlight = Math.max(0, this.#inFlight - bytes);
    if (wasFull && this.#inFlight < highWaterMark) this.emit('drain');
  }

  closedByClient(): void {
    this.subscription?.close();
    this.#ended = true;
    this.#forget();
    this.emit('close');
  }

  #finish(op: 'end' | 'destroy'): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#forget();
    this.#rpc.notify('stream', { id: this.#id, op });
    this.emit('close');
  }
}

/**
 * The port, checked free with a plain bind and released at once (a free one picked for 0). A plain bind fails while any
 * socket holds the port, SO_REUSEPORT ones included, so a second instance started on a port in use is refused with
 * EADDRINUSE exactly as without front threads, instead of sharing the port and taking half its connections.
 */
async function claimPort(host: string, port: number): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/** As a socket's: write answers false past this many bytes not yet flushed. */
const highWaterMark = 16 * 1024;
