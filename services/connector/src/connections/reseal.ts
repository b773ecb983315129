import { ServiceError } from '@platform/kit/errors';
import { repeatEvery } from '@platform/kit/lifecycle';
import type { Logger } from 'pino';
import type { Vault } from '../vault/vault.ts';
import type { ConnectionsRepository } from './connections.repository.ts';

export interface ResealReport {
  /** Rows now sealed with the current key. */
  moved: number;
  /** Rows a concurrent write replaced between read and update (they are under the writer's key now). */
  raced: number;
  /** Rows that failed authentication under their key: left as they are, logged by id. */
  failed: number;
  /** Batches read, the last one short or empty. */
  batches: number;
}

/**
 * Moves rows sealed with retired keys (listed before the current one) onto the current key, `batchSize` rows per
 * read, so a key can be removed once no row names it. Rows under a staged key (listed after the current one: an
 * instance further along a rolling rotation seals with it) stay where they are. Keys no longer configured are not
 * looked for: those rows fail loudly when read.
 * Safe beside live writers and other instances: each update applies only if the row still holds what was read.
 */
export class Resealer {
  readonly #repository: ConnectionsRepository;
  readonly #vault: Vault;
  readonly #batchSize: number;
  readonly #logger: Logger;
  #running: Promise<ResealReport> | undefined;
  #stopTimer: (() => void) | undefined;
  /** Set by `stop`: a pass in flight ends after its current batch (the rest waits for the next start). */
  #stopping = false;

  constructor(options: { repository: ConnectionsRepository; vault: Vault; batchSize: number; logger: Logger }) {
    this.#repository = options.repository;
    this.#vault = options.vault;
    this.#batchSize = options.batchSize;
    this.#logger = options.logger;
  }

  /** One full pass; a call while a pass runs joins it rather than starting a second. */
  runOnce(): Promise<ResealReport> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Runs a pass now and then every `intervalMs` (timer unref'd) until `stop`. */
  start(intervalMs: number): void {
    this.#stopping = false;
    this.#stopTimer?.();
    this.#stopTimer = repeatEvery(intervalMs, () => this.runOnce(), this.#logger, 'vault re-seal');
    // Rows left under a retired key by the last run start moving at once, not one interval later.
    this.runOnce().catch((error) => this.#logger.warn({ err: error }, 'vault re-seal failed'));
  }

  /** Stops the timer and waits for the batch in flight, so shutdown never cuts a row off between read and update. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#stopTimer?.();
    this.#stopTimer = undefined;
    await this.#running?.catch(() => undefined);
  }

  async #pass(): Promise<ResealReport> {
    const report: ResealReport = { moved: 0, raced: 0, failed: 0, batches: 0 };
    const retired = this.#vault.retiredKeyIds;
    let afterId: string | undefined;
    while (!this.#stopping) {
      const rows = await this.#repository.sealedUnder(retired, afterId, this.#batchSize);
      report.batches++;
      for (const row of rows) {
        const binding = { owner: row.owner, connector: row.connector };
        let plaintext: Buffer;
        try {
          plaintext = this.#vault.unseal(row.sealed, binding);
        } catch (error) {
          if (!(error instanceof ServiceError)) throw error;
          report.failed++;
          this.#logger.error({ connection: row.id, keyId: row.sealed.keyId, reason: error.details?.reason }, 'vault re-seal could not open a row');
          continue;
        }
        const next = this.#vault.seal(plaintext, binding);
        plaintext.fill(0);
        if (await this.#repository.replaceSealed(row.id, row.sealed, next)) report.moved++;
        else report.raced++;
      }
      afterId = rows.at(-1)?.id;
      if (rows.length < this.#batchSize) break;
    }
    if (report.moved + report.raced + report.failed > 0) this.#logger.info({ ...report, currentKeyId: this.#vault.currentKeyId }, 'vault re-seal pass');
    return report;
  }
}
