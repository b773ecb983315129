import type { Clock } from '@platform/kit/clock';
import { notify } from '@platform/kit/db/channels';
import { type Kysely, sql } from 'kysely';
import type { GatewaySchema } from '../db/schema.ts';
import type { ModelPrice } from '../metering/credit.ts';
import type { RateCard, RateCardSource } from './rate-card-file.ts';

/** NOTIFY channel: a new version was published, so every instance reloads its book. */
export const rateCardChannel = 'gateway_rate_cards';

/** A version already in the database whose content differs from the file of the same number. */
export class RateCardConflict extends Error {
  constructor(source: string, version: number) {
    super(
      `rate card ${source} differs from version ${version} already published in the database; ` +
        'published versions never change (every ledger row points at one): publish the new prices as a new version',
    );
    this.name = 'RateCardConflict';
  }
}

export class RateCardsRepository {
  readonly #db: Kysely<GatewaySchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<GatewaySchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /**
   * Publishes each card that is not in the database yet, in one transaction per card, and refuses (throws
   * RateCardConflict) when a version is there with other content. Idempotent: starting twice, or two instances
   * starting at once, publishes each version once. Returns the versions it added.
   */
  async publish(sources: readonly RateCardSource[]): Promise<number[]> {
    const added: number[] = [];
    for (const { card, contentSha256, source } of sources) {
      const inserted = await this.#db.transaction().execute(async (tx) => {
        const row = await tx
          .insertInto('rate_cards')
          .values({
            version: card.version,
            usd_per_credit_pico: card.usdPerCreditPico,
            content_sha256: contentSha256,
            source,
            published_at: this.#clock.sqlNow(),
          })
          .onConflict((conflict) => conflict.column('version').doNothing())
          .returning('version')
          .executeTakeFirst();
        if (!row) return false;
        await tx
          .insertInto('rate_card_prices')
          .values(
            [...card.prices].map(([model, price]) => ({
              version: card.version,
              model,
              input_pico_usd_per_mtok: price.inputPicoUsdPerMTok,
              output_pico_usd_per_mtok: price.outputPicoUsdPerMTok,
            })),
          )
          .execute();
        await sql`select ${notify(rateCardChannel, String(card.version))}`.execute(tx);
        return true;
      });
      if (inserted) {
        added.push(card.version);
        continue;
      }
      const existing = await this.#db.selectFrom('rate_cards').select('content_sha256').where('version', '=', card.version).executeTakeFirstOrThrow();
      if (existing.content_sha256 !== contentSha256) throw new RateCardConflict(source, card.version);
    }
    return added;
  }

  /** Every version above `afterVersion`, with its prices, oldest first. */
  async cardsAfter(afterVersion: number): Promise<RateCard[]> {
    const cards = await this.#db
      .selectFrom('rate_cards')
      .select(['version', 'usd_per_credit_pico'])
      .where('version', '>', afterVersion)
      .orderBy('version')
      .execute();
    if (cards.length === 0) return [];
    const prices = await this.#db
      .selectFrom('rate_card_prices')
      .selectAll()
      .where(
        'version',
        'in',
        cards.map((card) => card.version),
      )
      .execute();
    return cards.map((card) => {
      const map = new Map<string, ModelPrice>();
      for (const price of prices)
        if (price.version === card.version)
          map.set(price.model, { inputPicoUsdPerMTok: price.input_pico_usd_per_mtok, outputPicoUsdPerMTok: price.output_pico_usd_per_mtok });
      return { version: card.version, usdPerCreditPico: card.usd_per_credit_pico, prices: map };
    });
  }
}
