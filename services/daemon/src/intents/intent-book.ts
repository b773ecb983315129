import type { Clock } from '@platform/kit/clock';
import { monotonicUuidv7 } from '@platform/kit/ids';
import { envelopeHash, type JournalEnvelope } from '@platform/kit/journal-envelope';
import type { EventBroker } from '../events/event-broker.ts';
import type { JournalStore } from '../journal/journal-store.ts';
import { applyEnvelope, foldChain, type IntentSource, type IntentState, type IntentStatus, initialState, isTerminal, statusOfKinds } from './intent-state.ts';

/** One line of the intent list: enough to show and sort without reading the journal. */
export interface IntentSummary {
  id: string;
  /** Creation order within one millisecond (the first envelope's nonce, a UUIDv7). */
  order: string;
  status: IntentStatus;
  created_at: string;
  updated_at: string;
  prose: string;
  via: IntentSource['via'];
}

interface LoadedIntent {
  state: IntentState;
  envelopes: JournalEnvelope[];
}

/** Finished intents kept in memory after they were read, for repeated reads and reconnecting streams. */
const finishedCacheSize = 64;
const previewChars = 200;

/**
 * The daemon's intents: the journal on disk is the truth, this is its index and the working copy of the intents that
 * are not finished. Every change goes through `append`, which writes the signed envelope durably, folds it into the
 * state and only then publishes it as an event.
 */
export class IntentBook {
  readonly #store: JournalStore;
  readonly #broker: EventBroker;
  readonly #clock: Clock;
  readonly #loaded = new Map<string, LoadedIntent>();
  readonly #summaries = new Map<string, IntentSummary>();

  constructor(store: JournalStore, broker: EventBroker, clock: Clock) {
    this.#store = store;
    this.#broker = broker;
    this.#clock = clock;
  }

  /** Indexes every intent from the folder names; reads whole journals only for the unfinished ones. */
  async load(): Promise<void> {
    await this.#store.open();
    for (const listing of await this.#store.list()) {
      const status = statusOfKinds(listing.kinds);
      if (isTerminal(status)) {
        const first = await this.#store.first(listing.id);
        if (first === undefined) continue;
        const state = initialState(listing.id, first);
        this.#summaries.set(listing.id, { ...summaryOf(state), status });
        continue;
      }
      const envelopes = await this.#store.read(listing.id);
      const state = foldChain(listing.id, envelopes);
      this.#loaded.set(listing.id, { state, envelopes });
      this.#summaries.set(listing.id, summaryOf(state));
    }
  }

  async create(prose: string, source: IntentSource): Promise<IntentState> {
    const at = this.#clock.now();
    // A UUIDv7 made in this process sorts after every earlier one, even within one millisecond: the creation order.
    const nonce = monotonicUuidv7(at.getTime());
    const envelope = await this.#store.create('intent.created', { prose, source, nonce }, at);
    const id = envelopeHash(envelope);
    const state = initialState(id, envelope);
    this.#loaded.set(id, { state, envelopes: [envelope] });
    this.#summaries.set(id, summaryOf(state));
    this.#broker.publish({ event: envelope.kind, data: { envelope }, intentId: id, seq: envelope.seq });
    this.#broker.publish({ event: 'status', data: { status: state.status, previous: null }, intentId: id });
    return state;
  }

  /** Appends an envelope to an unfinished intent; resolves with the new state once it is durable and published. */
  async append(id: string, kind: string, body: Record<string, unknown>): Promise<IntentState> {
    const loaded = this.#loaded.get(id);
    if (loaded === undefined) throw new Error(`intent ${id} is not open`);
    const envelope = await this.#store.append(id, kind, body, this.#clock.now());
    const previous = loaded.state.status;
    loaded.envelopes.push(envelope);
    applyEnvelope(loaded.state, envelope);
    this.#summaries.set(id, summaryOf(loaded.state));
    this.#broker.publish({ event: kind, data: { envelope }, intentId: id, seq: envelope.seq });
    if (loaded.state.status !== previous) this.#broker.publish({ event: 'status', data: { status: loaded.state.status, previous }, intentId: id });
    if (isTerminal(loaded.state.status)) this.#evictFinished();
    return loaded.state;
  }

  /** An intent's state if it is in memory (every unfinished one is). */
  state(id: string): IntentState | undefined {
    return this.#loaded.get(id)?.state;
  }

  /** State and envelopes, read from the journal when not in memory; undefined for an unknown id. */
  async get(id: string): Promise<LoadedIntent | undefined> {
    const loaded = this.#loaded.get(id);
    if (loaded) return loaded;
    if (!this.#summaries.has(id)) return undefined;
    const envelopes = await this.#store.read(id);
    if (envelopes.length === 0) return undefined;
    const read = { state: foldChain(id, envelopes), envelopes };
    this.#loaded.set(id, read);
    this.#evictFinished();
    return read;
  }

  has(id: string): boolean {
    return this.#summaries.has(id);
  }

  /** Unfinished intents, oldest first. */
  unfinished(): IntentState[] {
    return [...this.#loaded.values()]
      .map((loaded) => loaded.state)
      .filter((state) => !isTerminal(state.status))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.order.localeCompare(b.order));
  }

  /** Newest first; `before` is the created_at of the last one already seen. */
  list(options: { limit: number; status?: IntentStatus; before?: string }): IntentSummary[] {
    return [...this.#summaries.values()]
      .filter(
        (summary) =>
          (options.status === undefined || summary.status === options.status) && (options.before === undefined || summary.created_at < options.before),
      )
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.order.localeCompare(a.order))
      .slice(0, options.limit);
  }

  get count(): number {
    return this.#summaries.size;
  }

  /** Intents by status, from the index (no journal read): `daemon_intents`, at scrape time. */
  countByStatus(): Map<IntentStatus, number> {
    const counts = new Map<IntentStatus, number>();
    for (const summary of this.#summaries.values()) counts.set(summary.status, (counts.get(summary.status) ?? 0) + 1);
    return counts;
  }

  /** Gates waiting for a person, over the unfinished intents (every one is in memory). */
  pendingGates(): number {
    let pending = 0;
    for (const { state } of this.#loaded.values()) if (!isTerminal(state.status)) for (const gate of state.gates) if (gate.status === 'pending') pending++;
    return pending;
  }

  /** Keeps every unfinished intent and the most recently loaded finished ones. */
  #evictFinished(): void {
    const finished = [...this.#loaded.entries()].filter(([, loaded]) => isTerminal(loaded.state.status));
    for (const [id] of finished.slice(0, Math.max(0, finished.length - finishedCacheSize))) {
      this.#loaded.delete(id);
      this.#broker.forget(id);
    }
  }
}

function summaryOf(state: IntentState): IntentSummary {
  return {
    id: state.id,
    order: state.order,
    status: state.status,
    created_at: state.created_at,
    updated_at: state.updated_at,
    prose: state.prose.length > previewChars ? `${state.prose.slice(0, previewChars - 1)}…` : state.prose,
    via: state.source.via,
  };
}
