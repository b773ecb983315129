import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { IntentBook } from '../intents/intent-book.ts';
import { type GateView, isTerminal } from '../intents/intent-state.ts';
import { KeyedQueue } from '../keyed-queue.ts';

export interface GateDecision {
  approved: boolean;
  answer: string;
  by: NonNullable<GateView['answered_by']>;
}

/** What answering a gate did: recorded now, or the decision recorded before (answering twice changes nothing). */
export interface AnswerOutcome {
  recorded: boolean;
  gate: GateView;
}

type Waiter = (decision: GateDecision) => void;

/**
 * Where gates wait for people. A decision is written to the journal (`gate.answered`) before the walk hears of it,
 * so the step it allows runs only after the approval is durable; answers to one gate are serialised, and a gate
 * already answered returns its first decision. A gate not answered by its `expires_at` (on the injected clock) is
 * denied with `by: timeout`.
 */
export class GateDesk {
  readonly #book: IntentBook;
  readonly #clock: Clock;
  readonly #waiters = new Map<string, Waiter>();
  readonly #answers = new KeyedQueue();

  constructor(book: IntentBook, clock: Clock) {
    this.#book = book;
    this.#clock = clock;
  }

  /**
   * Waits for the gate's decision: an answer, the timeout, or `signal` (cancel, drain), which resolves undefined
   * and leaves the gate pending in the journal.
   */
  async wait(intentId: string, nodeId: string, signal: AbortSignal): Promise<GateDecision | undefined> {
    const gate = this.#pending(intentId, nodeId);
    if (gate === undefined) return this.#recorded(intentId, nodeId);
    const key = `${intentId}/${nodeId}`;
    const stopTimer = new AbortController();
    const answered = new Promise<GateDecision>((resolve) => this.#waiters.set(key, resolve));
    const left = Date.parse(gate.expires_at) - this.#clock.now().getTime();
    void this.#clock.sleep(Math.max(0, left), AbortSignal.any([stopTimer.signal, signal])).then(async () => {
      if (stopTimer.signal.aborted || signal.aborted) return;
      await this.answer(intentId, nodeId, { approved: false, answer: '', by: 'timeout' }).catch(() => undefined);
    });
    const stopped = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    try {
      return await Promise.race([answered, stopped]);
    } finally {
      stopTimer.abort('settled');
      this.#waiters.delete(key);
    }
  }

  /** Records a decision once; a second answer (by anyone, for any reason) gets the first decision back. */
  answer(intentId: string, nodeId: string, decision: GateDecision): Promise<AnswerOutcome> {
    return this.#answers.run(`${intentId}/${nodeId}`, () => this.#answer(intentId, nodeId, decision));
  }

  async #answer(intentId: string, nodeId: string, decision: GateDecision): Promise<AnswerOutcome> {
    const loaded = await this.#book.get(intentId);
    if (loaded === undefined) throw new ServiceError('not_found', `no intent ${intentId}`);
    const gates = loaded.state.gates.filter((gate) => gate.node_id === nodeId);
    const last = gates.at(-1);
    if (last === undefined) throw new ServiceError('not_found', `intent ${intentId} has no gate ${nodeId}`);
    if (last.status !== 'pending') return { recorded: false, gate: last };
    if (isTerminal(loaded.state.status)) throw new ServiceError('conflict', `intent ${intentId} is ${loaded.state.status}; its gate ${nodeId} is closed`);
    await this.#book.append(intentId, 'gate.answered', { node_id: nodeId, approved: decision.approved, answer: decision.answer, by: decision.by });
    const gate = (this.#book.state(intentId)?.gates ?? []).filter((candidate) => candidate.node_id === nodeId).at(-1) as GateView;
    this.#waiters.get(`${intentId}/${nodeId}`)?.(decision);
    return { recorded: true, gate };
  }

  #pending(intentId: string, nodeId: string): GateView | undefined {
    return this.#book.state(intentId)?.gates.find((gate) => gate.node_id === nodeId && gate.status === 'pending');
  }

  #recorded(intentId: string, nodeId: string): GateDecision | undefined {
    const gate = this.#book
      .state(intentId)
      ?.gates.filter((candidate) => candidate.node_id === nodeId)
      .at(-1);
    if (gate === undefined || gate.status === 'pending') return undefined;
    return { approved: gate.status === 'approved', answer: gate.answer ?? '', by: gate.answered_by ?? 'user' };
  }
}
