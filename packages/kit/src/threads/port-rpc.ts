import type { MessagePort, Worker } from 'node:worker_threads';
import { type ErrorCode, ServiceError } from '../errors.ts';

/*
 * Calls between two threads over one MessagePort (or a Worker), in both directions. Messages are batched: every
 * call, answer and note made during one turn of the event loop leaves in one postMessage at the next check phase,
 * because a message costs a structured clone and a wake-up on the far side, and a busy thread makes hundreds of
 * calls a turn. A ServiceError thrown by a handler arrives as a ServiceError (code, message, retryable, details), so
 * the caller's error handler answers exactly what the handler's thread would have.
 */

type Envelope =
  | { t: 'call'; id: number; op: string; args: unknown }
  | { t: 'ok'; id: number; value: unknown }
  | { t: 'error'; id: number; error: WireError }
  | { t: 'note'; op: string; args: unknown };

interface WireError {
  message: string;
  service?: { code: ErrorCode; retryable: boolean; details: Record<string, unknown> | undefined };
}

/** What a side answers: `call` handlers return a value (or a promise of one); notes return nothing. */
export type RpcHandlers = Record<string, (args: never) => unknown>;

type Endpoint = Pick<MessagePort, 'postMessage' | 'on' | 'off'> | Pick<Worker, 'postMessage' | 'on' | 'off'>;

/**
 * One side of a thread pair. `handlers` answer the other side's calls and notes by name.
 *
 * @example const rpc = new PortRpc(parentPort, { submit: (command) => sequencer.submit(command) }); await rpc.call('take', { key })
 */
export class PortRpc {
  readonly #endpoint: Endpoint;
  readonly #handlers: RpcHandlers;
  readonly #waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #outbox: Envelope[] = [];
  #flushScheduled = false;
  #nextId = 1;
  #closed: Error | undefined;
  readonly #onMessage = (batch: Envelope[]) => {
    for (const envelope of batch) this.#receive(envelope);
  };

  constructor(endpoint: Endpoint, handlers: RpcHandlers) {
    this.#endpoint = endpoint;
    this.#handlers = handlers;
    endpoint.on('message', this.#onMessage);
  }

  /** Calls `op` on the other side; resolves with its answer or rejects with its error. */
  call<T = unknown>(op: string, args: unknown): Promise<T> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#send({ t: 'call', id, op, args });
    });
  }

  /** Tells the other side something, expecting no answer. */
  notify(op: string, args: unknown): void {
    if (!this.#closed) this.#send({ t: 'note', op, args });
  }

  /** Stops listening; calls still waiting reject with `reason`. */
  close(reason = new Error('the other thread is gone')): void {
    this.#closed ??= reason;
    this.#endpoint.off('message', this.#onMessage);
    for (const waiter of this.#waiting.values()) waiter.reject(reason);
    this.#waiting.clear();
  }

  #send(envelope: Envelope): void {
    this.#outbox.push(envelope);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      const batch = this.#outbox;
      this.#outbox = [];
      if (!this.#closed) this.#endpoint.postMessage(batch);
    });
  }

  #receive(envelope: Envelope): void {
    switch (envelope.t) {
      case 'call':
        void this.#answer(envelope.id, envelope.op, envelope.args);
        return;
      case 'note':
        this.#handler(envelope.op)?.(envelope.args as never);
        return;
      case 'ok':
      case 'error': {
        const waiter = this.#waiting.get(envelope.id);
        this.#waiting.delete(envelope.id);
        if (envelope.t === 'ok') waiter?.resolve(envelope.value);
        else waiter?.reject(fromWire(envelope.error));
      }
    }
  }

  async #answer(id: number, op: string, args: unknown): Promise<void> {
    try {
      const handler = this.#handler(op);
      if (!handler) throw new Error(`no handler for ${op}`);
      this.#send({ t: 'ok', id, value: await handler(args as never) });
    } catch (error) {
      this.#send({ t: 'error', id, error: toWire(error) });
    }
  }

  #handler(op: string): ((args: never) => unknown) | undefined {
    return Object.hasOwn(this.#handlers, op) ? this.#handlers[op] : undefined;
  }
}

function toWire(error: unknown): WireError {
  if (error instanceof ServiceError) {
    return { message: error.message, service: { code: error.code, retryable: error.retryable, details: error.details } };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

function fromWire(error: WireError): Error {
  if (!error.service) return new Error(error.message);
  return new ServiceError(error.service.code, error.message, { retryable: error.service.retryable, details: error.service.details });
}
