import { type AsyncStatus, type DaemonClient, type PendingGate, terminalStatuses } from './daemon-client.ts';
import { ServiceCallError } from './service-session.ts';

/** What the approver is asked: the gate's node id, question and options. */
export interface GateRequest {
  intentId: string;
  nodeId: string;
  question: string;
  options: string[];
}

export type Approver = (gate: GateRequest) => Promise<{ approved: boolean; answer: string }>;

/** Why a delegation ended without an answer: the outcome table of the runtime spec. */
export type DelegationFailure = 'failed' | 'cancelled' | 'clarification' | 'timeout';

export class DelegationError extends Error {
  readonly kind: DelegationFailure;
  readonly intentId: string;
  /** The daemon's question, when it needs more detail. */
  readonly question: string | undefined;
  constructor(kind: DelegationFailure, intentId: string, message: string, question?: string) {
    super(message);
    this.name = 'DelegationError';
    this.kind = kind;
    this.intentId = intentId;
    this.question = question;
  }
}

/** The time a delegation runs on; a test passes a manual clock (`now` and `sleep` are all it needs). */
export interface DelegationClock {
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const realClock: DelegationClock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

export interface DelegateOptions {
  /** Asked at each gate; without one every gate is denied. */
  approver?: Approver;
  /** Serialises gate answering across clients on one intent: resolve true to answer, false when another client has. */
  claimGate?: (intentId: string, nodeId: string) => boolean | Promise<boolean>;
  /** Default 1.5 s. */
  pollIntervalMs?: number;
  /** Default 30 minutes. */
  maxWaitMs?: number;
  /** Reconnects of the event stream before polling drives alone. Default 5. */
  maxStreamReconnects?: number;
  strategy?: 'enqueue' | 'reject' | 'interrupt';
  clock?: DelegationClock;
  /** Every live event of the intent, for a person watching (the CLI prints status and say). */
  onEvent?: (event: { event: string; data: unknown }) => void;
  /** Called with the intent id as soon as the daemon has it. */
  onSubmitted?: (intentId: string) => void;
}

/** The outcome table: an answer, or the error each terminal status (or a clarification) stands for. */
export function outcomeOf(status: AsyncStatus): { answer: string } | { error: DelegationError } | undefined {
  const id = status.intent_id;
  const question = status.result.clarification;
  if (question) return { error: new DelegationError('clarification', id, `more detail is needed: ${question}`, question) };
  if (status.status === 'completed') return { answer: status.result.answer || 'Done' };
  if (status.status === 'failed') return { error: new DelegationError('failed', id, status.result.error || 'the delegated task failed') };
  if (status.status === 'cancelled') return { error: new DelegationError('cancelled', id, 'the delegated task was cancelled') };
  return undefined;
}

/**
 * Hands prose to the daemon and drives it to an outcome, as the runtime spec's delegation flow says: submit;
 * subscribe to the intent's events (a `gate.invoked` is answered, `intent.attest`/`fail`/`cancel` end it); answer each
 * gate through the approver (none denies); poll pending gates and status every `pollIntervalMs` in parallel (the sole
 * driver once the stream has been reconnected `maxStreamReconnects` times, and the cover for the dispatch-then-
 * subscribe race); never answer one gate twice (`claimGate` extends that across clients); give up after `maxWaitMs`.
 * A stream that closes while the intent is not terminal is a disconnect, never an end. Resolves with the answer
 * (`Done` when empty); rejects with a DelegationError.
 *
 * @example const answer = await delegate(new DaemonClient({ baseUrl, token }), 'Pay Bob 5 for lunch', { approver })
 */
export async function delegate(client: DaemonClient, prose: string, options: DelegateOptions = {}): Promise<string> {
  const { intent_id: intentId } = await client.submit(prose, options.strategy);
  options.onSubmitted?.(intentId);
  return follow(client, intentId, options);
}

/**
 * Steps 2 to 6 of the delegation flow for an intent already submitted: a second client attaching to the same intent
 * (with the same `claimGate`, so one gate is answered once between them), or a client picking up after a restart.
 *
 * @example const answer = await follow(daemon, intentId, { approver, claimGate: folderGateClaims(dir) })
 */
export async function follow(client: DaemonClient, intentId: string, options: DelegateOptions = {}): Promise<string> {
  const clock = options.clock ?? realClock;
  const stop = new AbortController();
  const outcome = Promise.withResolvers<string>();
  const finish = (result: { answer: string } | { error: DelegationError }) => {
    if (stop.signal.aborted) return;
    stop.abort();
    if ('answer' in result) outcome.resolve(result.answer);
    else outcome.reject(result.error);
  };
  const judge = async () => {
    const verdict = outcomeOf(await client.status(intentId));
    if (verdict) finish(verdict);
  };
  const gates = new GateHandler(client, intentId, options);
  const watchers = [
    streamLoop(client, intentId, options, stop.signal, gates, judge, clock),
    pollLoop(client, intentId, options.pollIntervalMs ?? 1_500, stop.signal, gates, finish, clock),
    clock.sleep(options.maxWaitMs ?? 30 * 60_000, stop.signal).then(() => {
      finish({ error: new DelegationError('timeout', intentId, `the delegated task did not finish within ${secondsOf(options.maxWaitMs ?? 1_800_000)} s`) });
    }),
  ];
  try {
    return await outcome.promise;
  } finally {
    stop.abort();
    await Promise.allSettled(watchers);
    await gates.settled();
  }
}

/** A wait in seconds as a person set it: 1.5 stays 1.5, never rounded to a wait that did not happen. */
function secondsOf(ms: number): string {
  return String(Number((ms / 1000).toFixed(3)));
}

/** Answers each gate at most once from this client, and not at all when another client claimed it. */
class GateHandler {
  readonly #client: DaemonClient;
  readonly #intentId: string;
  readonly #options: DelegateOptions;
  readonly #seen = new Set<string>();
  readonly #working = new Set<Promise<void>>();

  constructor(client: DaemonClient, intentId: string, options: DelegateOptions) {
    this.#client = client;
    this.#intentId = intentId;
    this.#options = options;
  }

  handle(gate: Pick<PendingGate, 'node_id' | 'question' | 'options'>): void {
    if (this.#seen.has(gate.node_id)) return;
    this.#seen.add(gate.node_id);
    const work = this.#answer(gate).catch(() => {
      // A failed answer may be tried again when the gate shows up pending once more.
      this.#seen.delete(gate.node_id);
    });
    this.#working.add(work);
    const forget = () => this.#working.delete(work);
    work.then(forget, forget);
  }

  async #answer(gate: Pick<PendingGate, 'node_id' | 'question' | 'options'>): Promise<void> {
    if (this.#options.claimGate && !(await this.#options.claimGate(this.#intentId, gate.node_id))) return;
    const request = { intentId: this.#intentId, nodeId: gate.node_id, question: gate.question, options: gate.options };
    const decision = this.#options.approver ? await this.#options.approver(request) : { approved: false, answer: 'denied: no approver' };
    try {
      await this.#client.answerGate(this.#intentId, gate.node_id, decision);
    } catch (error) {
      // The intent ended meanwhile (cancelled, timed out): nothing left to answer.
      if (error instanceof ServiceCallError && error.status === 409) return;
      throw error;
    }
  }

  async settled(): Promise<void> {
    await Promise.allSettled([...this.#working]);
  }
}

const terminalEvents: ReadonlySet<string> = new Set(['intent.attest', 'intent.fail', 'intent.cancel']);

async function streamLoop(
  client: DaemonClient,
  intentId: string,
  options: DelegateOptions,
  signal: AbortSignal,
  gates: GateHandler,
  judge: () => Promise<void>,
  clock: DelegationClock,
): Promise<void> {
  let lastEventId: string | undefined;
  const reconnects = options.maxStreamReconnects ?? 5;
  for (let attempt = 0; attempt <= reconnects && !signal.aborted; attempt++) {
    try {
      for await (const event of client.events({ intentId, ...(lastEventId === undefined ? {} : { lastEventId }), signal })) {
        if (event.id !== undefined) lastEventId = event.id;
        options.onEvent?.(event);
        if (event.event === 'snapshot') {
          // An intent that has already ended: its stream is the snapshot and nothing more, so the outcome is now.
          if (terminalStatuses.has(event.data.status)) {
            await judge();
            return;
          }
          for (const gate of event.data.pending_gates ?? []) gates.handle(gate);
          // Every connection opens with a snapshot: only an event after it shows the stream working again.
          continue;
        }
        if (event.event === 'gate.invoked') gates.handle(event.data.envelope.body);
        if (terminalEvents.has(event.event)) {
          await judge();
          return;
        }
        attempt = 0;
      }
    } catch {
      // A broken connection: reconnect below, or leave it to polling.
    }
    if (signal.aborted) return;
    // The stream closed without a terminal event: a disconnect. Back off a little, then resume from the last id.
    await clock.sleep(Math.min(250 * 2 ** attempt, 5_000), signal);
  }
}

async function pollLoop(
  client: DaemonClient,
  intentId: string,
  intervalMs: number,
  signal: AbortSignal,
  gates: GateHandler,
  finish: (result: { answer: string } | { error: DelegationError }) => void,
  clock: DelegationClock,
): Promise<void> {
  while (!signal.aborted) {
    await clock.sleep(intervalMs, signal);
    if (signal.aborted) return;
    try {
      for (const gate of await client.pendingGates(intentId)) gates.handle(gate);
      const status = await client.status(intentId);
      if (terminalStatuses.has(status.status)) {
        const verdict = outcomeOf(status);
        if (verdict) finish(verdict);
      }
    } catch {
      // The daemon is unreachable for a moment; the next round tries again until the wait runs out.
    }
  }
}
