import { sign } from 'node:crypto';
import type { Clock } from '@platform/kit/clock';
import type { Database } from '@platform/kit/db/open-database';
import { ServiceError } from '@platform/kit/errors';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { SettlementChain } from '../chain/settlement-chain.ts';
import type { WindowSettings } from '../config.ts';
import type { AccountTable, BatchTable, HoldTable, IdempotencyTable, SettlementSchema } from '../db/schema.ts';
import { anchorEventId, transferEventId } from '../stream/event-log.ts';
import { closeWindow, readWindowState, type WindowState } from '../windows/window-closer.ts';
import type { CloseCommand, Command, CommandOutcome, MovementCommand } from './commands.ts';
import { CryptoWorker } from './crypto-worker.ts';
import { Group, nonceKey } from './group.ts';
import { isKeyConflict, loadGroupBase, RecentRows, writeGroup } from './group-store.ts';
import type { SequencerKey } from './ledger-key.ts';
import type { LogView } from './log-view.ts';
import { batchView } from './views.ts';

type Db = Kysely<SettlementSchema>;

export interface SequencerOptions {
  database: Database<SettlementSchema>;
  key: SequencerKey;
  clock: Clock;
  logger: Logger;
  log: LogView;
  chain: SettlementChain;
  window: WindowSettings;
  /** Most commands committed in one transaction. */
  maxGroup: number;
  /** How often a standby tries to take the lock. */
  takeoverPollMs: number;
  /** How often the sequencer returns expired holds and checks the window's age. */
  tickMs: number;
  /** Idempotency records, intent nonces and holds each kept in memory to answer without a read (default 100,000). */
  recentIdempotencyKeys?: number;
  /** Called after each commit that adds to the event log, with the highest event id it wrote (this process's stream readers catch up at once). */
  onCommitted?: (headId: bigint) => void;
  /** Called with each batch once written (the chain side anchors it at once instead of at its next poll). */
  onBatch?: (batch: BatchTable) => void;
  /** Why movements are refused now (the vault froze), or undefined. */
  halted?: () => string | undefined;
}

export type SequencerRole = 'standby' | 'sequencer' | 'stopped';

interface Pending {
  command: Command;
  resolve: (outcome: CommandOutcome) => void;
}

/** A group applied in memory, with each caller's outcome, ready to write. */
interface Prepared {
  group: Group;
  pending: Pending[];
  outcomes: CommandOutcome[];
}

/** A group whose write is under way: `written` resolves to the error, or undefined once committed. */
interface InFlight extends Prepared {
  written: Promise<unknown>;
  /** The seq the group starts at: where the next attempt starts again if the write is refused. */
  firstSeq: bigint;
}

/** Groups with at most this many receipts are signed on this thread rather than the crypto worker's. */
const signInPlaceUpTo = 2;
/** Commands waiting beyond this answer 503 at once: a queue that cannot drain only adds latency. */
const maxQueued = 20_000;
/** The writer's account cache is dropped when it grows past this; the database stays the truth. */
const maxCachedAccounts = 200_000;

const standbyError = () => new ServiceError('unavailable', 'this instance is a standby: the sequencer is not here; retry shortly', { retryable: true });

/**
 * The single writer. It holds a PostgreSQL advisory lock on a connection of its own and applies every write
 * through that connection, so losing the connection loses the lock and the right to write together. Other
 * instances stay standbys: they serve reads, refuse writes with a retryable 503 and poll for the lock.
 *
 * Writes are group-committed: commands queue while a transaction is in flight, then the next group applies
 * them in order in memory and commits them in one transaction. A caller hears back only after that commit.
 */
export class Sequencer {
  #role: SequencerRole = 'standby';
  readonly #options: SequencerOptions;
  readonly #queue: Pending[] = [];
  readonly #accounts = new Map<string, AccountTable>();
  readonly #recentIdempotency: RecentRows<IdempotencyTable>;
  readonly #recentNonces: RecentRows<true>;
  readonly #recentHolds: RecentRows<HoldTable>;
  /** Signs receipts and builds balance trees off the request thread. */
  readonly #crypto: CryptoWorker;
  /** Commands still to apply with their idempotency keys and nonces read from the database (after a guard refusal). */
  #verifyKeys = 0;
  readonly #stop = new AbortController();
  #wake: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #seq = 1n;
  #committedSize = 0;
  #window: WindowState = { lastBatchNumber: 0n, closedSize: 0, openedAt: null };
  /** The batch being written in the background, and why the last one failed if it did. */
  #batchWriting: Promise<void> = Promise.resolve();
  #batchFailure: Error | undefined;

  constructor(options: SequencerOptions) {
    this.#options = options;
    this.#recentIdempotency = new RecentRows(options.recentIdempotencyKeys);
    this.#recentNonces = new RecentRows(options.recentIdempotencyKeys);
    this.#recentHolds = new RecentRows(options.recentIdempotencyKeys);
    this.#crypto = new CryptoWorker(options.key.privateKey);
  }

  get role(): SequencerRole {
    return this.#role;
  }

  /** The log size of everything committed so far (meaningful on the sequencer). */
  get committedSize(): number {
    return this.#committedSize;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    await this.#running;
    this.#role = 'stopped';
    await this.#crypto.close();
  }

  /** Queues a command for the writer; resolves with its result after commit, or throws its ServiceError. */
  async submit(command: Command): Promise<unknown> {
    if (this.#role !== 'sequencer') throw standbyError();
    const halted = command.kind === 'close' || command.kind === 'expire' ? undefined : this.#options.halted?.();
    if (halted !== undefined) throw new ServiceError('conflict', halted, { details: { reason: 'vault_frozen' } });
    if (this.#queue.length >= maxQueued) throw new ServiceError('unavailable', 'the sequencer is saturated; retry shortly', { retryable: true });
    const outcome = await new Promise<CommandOutcome>((resolve) => {
      this.#queue.push({ command, resolve });
      this.#wake?.();
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.data;
  }

  async #run(): Promise<void> {
    const { clock, logger } = this.#options;
    while (!this.#stop.signal.aborted) {
      let led = false;
      try {
        led = await this.#tryLead();
      } catch (error) {
        logger.error({ err: error }, 'sequencer stepped down after a failure');
      }
      if (!led && !this.#stop.signal.aborted) await clock.sleep(this.#options.takeoverPollMs, this.#stop.signal);
    }
  }

  /** PGlite is one process's private database: holding it is holding the lease. */
  async #tryLead(): Promise<boolean> {
    const { database } = this.#options;
    if (database.kind === 'pglite') {
      await this.#lead(database.db);
      return true;
    }
    return database.db.connection().execute(async (connection) => {
      const lockName = `platform-settlement-sequencer:${database.schema}`;
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(hashtext(${lockName})) as locked`.execute(connection);
      if (!rows[0]?.locked) return false;
      try {
        await this.#lead(connection);
      } finally {
        await sql`select pg_advisory_unlock(hashtext(${lockName}))`.execute(connection).catch(() => undefined);
      }
      return true;
    });
  }

  async #lead(db: Db): Promise<void> {
    const { logger, log } = this.#options;
    const maxSeq = await db
      .selectFrom('receipts')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .executeTakeFirst();
    this.#seq = BigInt(maxSeq?.seq ?? 0n) + 1n;
    this.#committedSize = Number(this.#seq - 1n);
    await log.ensure(db, this.committedSize);
    this.#window = await readWindowState(db);
    this.#accounts.clear();
    this.#role = 'sequencer';
    logger.info({ seq: this.committedSize }, 'this instance is the sequencer');
    // Ends the tick loop when this instance stops leading, even if the process goes on as a standby.
    const leadership = new AbortController();
    const ticker = this.#tick(AbortSignal.any([this.#stop.signal, leadership.signal]));
    // The group being written. The next group is read and applied while it commits (the JavaScript work and
    // the database round trip overlap), then waits for it: callers still hear back in order, after their commit.
    let writing: InFlight | undefined;
    let prepared: Prepared | undefined;
    try {
      while (!this.#stop.signal.aborted) {
        if (this.#batchFailure) throw this.#batchFailure;
        const next = this.#queue[0];
        if (!next || next.command.kind === 'close') {
          if (writing) {
            await this.#finish(db, writing);
            writing = undefined;
            continue;
          }
          if (!next) {
            await new Promise<void>((resolve) => {
              this.#wake = resolve;
            });
            this.#wake = undefined;
            continue;
          }
          this.#queue.shift();
          next.resolve(await this.#settle(db, next.command as CloseCommand));
          continue;
        }
        // Let the requests already read from sockets in this turn of the event loop join the group first. On PGlite
        // the write runs on this thread, and a signature made in place does not wait either: without this, a group
        // would form and commit in the microtasks after each request, one pay per group.
        await new Promise<void>((resolve) => setImmediate(resolve));
        prepared = await this.#prepare(this.#takeGroup(), writing);
        const committed = writing ? await this.#finish(db, writing, prepared) : true;
        writing = undefined;
        if (!committed) {
          prepared = undefined;
          continue;
        }
        // Answers wait for the group before them even when there is nothing to write: an idempotent replay
        // of a command in that group must not overtake its commit.
        if (prepared.group.hasWrites) writing = this.#write(db, prepared);
        else this.#answer(prepared);
        prepared = undefined;
      }
      if (writing) await this.#finish(db, writing);
    } catch (error) {
      if (writing) this.#fail(writing.pending);
      if (prepared) this.#fail(prepared.pending);
      throw error;
    } finally {
      this.#role = this.#stop.signal.aborted ? 'stopped' : 'standby';
      this.#accounts.clear();
      this.#recentIdempotency.clear();
      this.#recentNonces.clear();
      this.#recentHolds.clear();
      this.#verifyKeys = 0;
      for (const pending of this.#queue.splice(0)) pending.resolve({ ok: false, error: standbyError() });
      this.#wake = undefined;
      leadership.abort();
      await ticker;
      await this.#batchWriting;
      this.#batchFailure = undefined;
    }
  }

  #takeGroup(): Array<Pending & { command: MovementCommand }> {
    const group: Array<Pending & { command: MovementCommand }> = [];
    while (group.length < this.#options.maxGroup) {
      const next = this.#queue[0];
      if (!next || next.command.kind === 'close') break;
      this.#queue.shift();
      group.push(next as Pending & { command: MovementCommand });
    }
    return group;
  }

  /** Reads what the commands touch (through the pool, as the group being written will leave it) and applies them in memory. */
  async #prepare(pending: Array<Pending & { command: MovementCommand }>, writing?: InFlight): Promise<Prepared> {
    const { clock, key, database } = this.#options;
    const now = clock.now();
    if (this.#accounts.size > maxCachedAccounts) this.#accounts.clear();
    try {
      const readKeys = this.#verifyKeys > 0;
      this.#verifyKeys = Math.max(0, this.#verifyKeys - pending.length);
      const caches = { accounts: this.#accounts, idempotency: this.#recentIdempotency, nonces: this.#recentNonces, holds: this.#recentHolds, readKeys };
      const base = await loadGroupBase(
        database.db,
        pending.map((p) => p.command),
        caches,
        writing?.group,
        now,
      );
      const group = new Group(base, this.#seq, key, now);
      const outcomes = pending.map(({ command }): CommandOutcome => {
        try {
          return { ok: true, data: group.apply(command) };
        } catch (error) {
          if (error instanceof ServiceError) return { ok: false, error };
          throw error;
        }
      });
      await group.signWith((messages) =>
        // A message each way and two thread wake-ups cost more than signing one or two receipts here: small
        // groups (a lightly loaded ledger, the marketplace's hold and capture) sign in place.
        messages.length <= signInPlaceUpTo
          ? Promise.resolve(messages.map((message) => sign(null, message, key.privateKey).toString('hex')))
          : this.#crypto.sign(messages),
      );
      return { group, pending, outcomes };
    } catch (error) {
      this.#fail(pending);
      throw error;
    }
  }

  #write(db: Db, prepared: Prepared): InFlight {
    const firstSeq = this.#seq;
    this.#seq = prepared.group.nextSeq;
    const written = writeGroup(db, prepared.group).then(
      () => undefined,
      (error: unknown) => error ?? new Error('write failed'),
    );
    return { ...prepared, written, firstSeq };
  }

  /**
   * Waits for a group's commit, then answers its callers and closes the window if it is due. A failed commit
   * is not known to be durable: nobody hears "ok" (a retry with the same idempotency_key returns the original
   * result if it did land), and the writer steps down so the next leader starts from the database.
   */
  /**
   * Waits for a group's commit, answers its callers and closes the window if due. Returns false when the write
   * was refused by the idempotency guard: then nothing of it landed, and its commands and those of the group
   * prepared on top of it go back to the front of the queue, to be applied again with their keys read first.
   */
  async #finish(db: Db, inflight: InFlight, next?: Prepared): Promise<boolean> {
    const error = await inflight.written;
    if (error && isKeyConflict(error)) {
      const again = [...inflight.pending, ...(next?.pending ?? [])];
      this.#queue.unshift(...again);
      this.#verifyKeys = again.length;
      this.#seq = inflight.firstSeq;
      return false;
    }
    if (error) throw error;
    this.#afterCommit(inflight.group);
    this.#answer(inflight);
    await this.#closeIfDue(db, inflight.group);
    return true;
  }

  #answer(prepared: Prepared): void {
    for (let i = 0; i < prepared.pending.length; i++) prepared.pending[i]?.resolve(prepared.outcomes[i] as CommandOutcome);
  }

  #fail(pending: readonly Pending[]): void {
    const failure = new ServiceError('unavailable', 'the write could not be confirmed; retry with the same idempotency_key', { retryable: true });
    for (const p of pending) p.resolve({ ok: false, error: failure });
  }

  #afterCommit(group: Group): void {
    const first = group.receipts[0];
    for (const account of group.accounts.values()) this.#accounts.set(account.did, account);
    this.#recentIdempotency.remember(group.idempotency);
    this.#recentNonces.remember(group.nonces.map((row) => [nonceKey(row.did, row.nonce), true]));
    this.#recentHolds.remember(group.holds);
    this.#committedSize = Number(group.nextSeq - 1n);
    if (first) {
      this.#options.log.appendFrom(
        Number(first.seq),
        group.receipts.map((receipt) => receipt.leaf_hash),
      );
      this.#window.openedAt ??= first.at;
    }
    if (first) this.#options.onCommitted?.(transferEventId(group.nextSeq - 1n));
  }

  async #closeIfDue(db: Db, group: Group): Promise<void> {
    if (this.committedSize - this.#window.closedSize >= this.#options.window.maxReceipts) await this.#settle(db, { kind: 'close', reason: 'count' });
    else if (group.receipts.length > 0 && group.largestMicros >= this.#options.window.immediateMicros)
      await this.#settle(db, { kind: 'close', reason: 'amount' });
  }

  /**
   * Closes the open window. Batches are written one at a time, each finishing in the background while groups
   * go on; `POST /v1/settle` waits for its batch to be written. A batch that fails to be written steps the
   * writer down (the loop checks), and the next leader reopens the window from the last batch in the database.
   */
  async #settle(db: Db, command: CloseCommand): Promise<CommandOutcome> {
    const { clock, key, log, chain, logger } = this.#options;
    try {
      await this.#batchWriting;
      if (this.#batchFailure) throw this.#batchFailure;
      const started = await closeWindow(
        { db, log, key, now: clock.now(), crypto: this.#crypto, onBatch: this.#options.onBatch },
        this.#window,
        this.committedSize,
        command.reason,
      );
      if (!started) return { ok: true, data: { closed: false, batch: null } };
      this.#window = { lastBatchNumber: started.number, closedSize: this.committedSize, openedAt: null };
      this.#batchWriting = started.written.then(
        (batch) => this.#options.onCommitted?.(anchorEventId(batch.log_size)),
        (error: unknown) => {
          logger.error({ err: error }, 'writing a batch failed');
          this.#batchFailure ??= error instanceof Error ? error : new Error(String(error));
        },
      );
      if (command.reason !== 'settle') return { ok: true, data: { closed: true } };
      const { balance_tree: _balances, withdrawal_tree: _withdrawals, ...summary } = await started.written;
      return { ok: true, data: { closed: true, batch: batchView(summary, chain) } };
    } catch (error) {
      logger.error({ err: error }, 'closing the window failed');
      return { ok: false, error: new ServiceError('unavailable', 'the window could not be closed; retry shortly', { retryable: true }) };
    }
  }

  /** Returns expired holds and closes a window that has been open long enough, while this instance leads. */
  async #tick(signal: AbortSignal): Promise<void> {
    const { clock, logger, window } = this.#options;
    while (!signal.aborted) {
      await clock.sleep(this.#options.tickMs, signal);
      if (signal.aborted) return;
      try {
        await this.submit({ kind: 'expire' });
        const openedAt = this.#window.openedAt;
        if (openedAt && clock.now().getTime() - openedAt.getTime() >= window.seconds * 1000) await this.submit({ kind: 'close', reason: 'time' });
      } catch (error) {
        if (!(error instanceof ServiceError)) logger.error({ err: error }, 'sequencer tick failed');
      }
    }
  }
}
