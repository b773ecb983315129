import { repeatEvery } from '@platform/kit/lifecycle';
import type { Logger } from 'pino';
import type { RateCard } from './rate-card-file.ts';
import { type RateCardsRepository, rateCardChannel } from './rate-cards.repository.ts';

type Listen = (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>;

/**
 * The newest published rate card, in memory, so pricing a call costs a map lookup. It follows the database: a
 * version another instance publishes reaches this one through NOTIFY (a hint) and the periodic `refresh` (the
 * fallback), so instances converge on the newest card without a restart.
 */
export class RateCardBook {
  readonly #repository: RateCardsRepository;
  readonly #logger: Logger;
  #current: RateCard | undefined;
  #reads: Promise<void> = Promise.resolve();

  constructor(repository: RateCardsRepository, logger: Logger) {
    this.#repository = repository;
    this.#logger = logger;
  }

  /** The card that prices new calls; `load()` must have run. */
  current(): RateCard {
    if (!this.#current) throw new Error('rate card book used before load()');
    return this.#current;
  }

  async load(): Promise<void> {
    await this.refresh();
    if (!this.#current) throw new Error('no rate card is published in the database');
  }

  /** Picks up newer versions. Reads run one after another, so each call sees everything committed before it. */
  refresh(): Promise<void> {
    const read = this.#reads.then(() => this.#readNewer());
    this.#reads = read.catch(() => {});
    return read;
  }

  /**
   * Follows publications: NOTIFY on the rate card channel triggers a refresh, and a periodic one catches any
   * notification lost to a reconnect. Returns the function that stops both.
   */
  async follow(listen: Listen, intervalMs: number): Promise<() => Promise<void>> {
    const onHint = () => void this.refresh().catch((error: unknown) => this.#logger.warn({ err: error }, 'rate card refresh failed'));
    const unlisten = await listen(rateCardChannel, onHint);
    const stopTimer = repeatEvery(intervalMs, () => this.refresh(), this.#logger, 'rate card refresh');
    return async () => {
      stopTimer();
      await unlisten();
    };
  }

  async #readNewer(): Promise<void> {
    const newer = await this.#repository.cardsAfter(this.#current?.version ?? 0);
    const newest = newer.at(-1);
    if (!newest) return;
    if (this.#current) this.#logger.info({ from: this.#current.version, to: newest.version }, 'rate card updated: new calls are priced by the new version');
    this.#current = newest;
  }
}
