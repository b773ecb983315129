import type { Clock } from '@platform/kit/clock';
import type { Database } from '@platform/kit/db/open-database';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { SettlementChain } from '../chain/settlement-chain.ts';
import type { WindowSettings } from '../config.ts';
import type { AccountTable, BatchTable, HoldTable, IdempotencyTable, SettlementSchema } from '../db/schema.ts';
import { refusalOf, type SettlementMetrics } from '../metrics.ts';
import { type EventIds, readEventIds } from '../stream/event-log.ts';
import { type BuiltBatch, closeWindow, readWindowState, type WindowState } from '../windows/window-closer.ts';
import { type CloseCommand, type Command, type CommandOutcome, type MovementCommand, unstorableMember } from './commands.ts';
import { CryptoWorker } from './crypto-worker.ts';
import { Group, nonceKey } from './group.ts';
import { isKeyConflict, loadGroupBase, RecentRows, writeGroup, writeRows } from './group-store.ts';
import type { SequencerKey } from './ledger-key.ts';
import type { LogView } from './log-view.ts';
import { ApplyFailure, applyRefusal, databaseRefusal } from './refusals.ts';
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
  /** Where pays, holds and group commits are counted; none: not counted. */
  metrics?: SettlementMetrics;
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
  /** Taken alone after a group was refused for what one of its commands carries: it never carries the batch. */
  isolated: boolean;
  outcomes: CommandOutcome[];
  /** Settles once every receipt of the group is signed (rejects if signing failed): the group is written only then. */
  signed: Promise<void>;
}

/** A group whose write is under way: `written` resolves to the error, or undefined once committed. */
interface InFlight extends Prepared {
  written: Promise<unknown>;
  /** The seq the group starts at: where the next attempt starts again if the write is refused. */
  firstSeq: bigint;
  /** The batch written in the same statement, after the group's receipts. */
  batch: BatchTable | undefined;
}

/**
 * The batch of the last close, from its snapshot until it is written. Its tree is built in the background; the
 * writer then writes it in order with its group commits (in the next group's statement, or alone when no group
 * comes), so it enters the event log after every receipt committed before it and before every later one.
 */
interface PendingBatch {
  /** Settles once the row is built (never rejects: a failure is `#batchFailure`). */
  building: Promise<void>;
  /** The row, once built and until it is written. */
  built: BuiltBatch | undefined;
  /** True while a statement carrying it is in flight. */
  writing: boolean;
  /** Answers `POST /v1/settle`: the row as written, or the reason it was not. */
  written: Promise<BatchTable>;
  resolve: (batch: BatchTable) => void;
  reject: (error: Error) => void;
}

/** Groups with at most this many receipts are signed on this thread rather than the crypto worker's. */
const signInPlaceUpTo = 2;
/** Commands waiting beyond this answer 503 at once: a queue that cannot drain only adds latency. */
const maxQueued = 20_000;
/** The writer's account cache is dropped when it grows past this; the database stays the truth. */
const maxCachedAccounts = 200_000;

/** The commands the metrics count: pays, and the hold's place, capture, release and expiry. */
const counted = new Set<Command['kind']>(['pay', 'hold', 'capture', 'release', 'expire']);

function countSuccess(metrics: SettlementMetrics, command: Command, data: unknown): void {
  if (command.kind === 'pay') metrics.pay('ok');
  else if (command.kind === 'hold') metrics.hold('placed');
  else if (command.kind === 'capture') metrics.hold('captured');
  else if (command.kind === 'release') metrics.hold('released');
  else {
    const expired = (data as { expired?: number }).expired ?? 0;
    if (expired > 0) metrics.hold('expired', expired);
  }
}

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
  /** Commands at the front of the queue to apply and write one at a time: a group with them was refused for one's data. */
  #isolating = 0;
  /** When this writer's session last answered (a commit, or the idle check): the lock is known held until then. */
  #sessionSeenAt = 0;
  readonly #stop = new AbortController();
  #wake: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #seq = 1n;
  #committedSize = 0;
  #window: WindowState = { lastBatchNumber: 0n, closedSize: 0, openedAt: null };
  /** The batch being built or waiting to be written, and why the last one failed if it did. */
  #batch: PendingBatch | undefined;
  #batchFailure: Error | undefined;
  /** How event ids are derived (read on taking the lead), and the id of the last anchor written. */
  #eventIds: EventIds | undefined;
  #lastAnchorId = 0n;

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

  /**
   * Queues a command for the writer; resolves with its result after commit, or throws its ServiceError. Every write
   * of the service passes here (front threads' included), so pays and holds are counted here, with their outcome.
   */
  async submit(command: Command): Promise<unknown> {
    const metrics = this.#options.metrics;
    if (!metrics || !counted.has(command.kind)) return this.#submit(command);
    try {
      const data = await this.#submit(command);
      countSuccess(metrics, command, data);
      return data;
    } catch (error) {
      if (command.kind === 'pay') metrics.pay(refusalOf(error));
      else if (command.kind !== 'expire') metrics.hold(refusalOf(error));
      throw error;
    }
  }

  async #submit(command: Command): Promise<unknown> {
    if (this.#role !== 'sequencer') throw standbyError();
    const halted = command.kind === 'close' || command.kind === 'expire' ? undefined : this.#options.halted?.();
    if (halted !== undefined) throw new ServiceError('conflict', halted, { details: { reason: 'vault_frozen' } });
    if (this.#queue.length >= maxQueued) throw new ServiceError('unavailable', 'the sequencer is saturated; retry shortly', { retryable: true });
    const unstorable = unstorableMember(command);
    if (unstorable !== undefined) throw invalidRequest(`${unstorable} must not hold a NUL character or a lone surrogate`, { field: unstorable });
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
    this.#eventIds = await readEventIds(db);
    const lastAnchor = await db.selectFrom('batches').select('event_id').orderBy('event_id', 'desc').limit(1).executeTakeFirst();
    this.#lastAnchorId = lastAnchor?.event_id ?? 0n;
    this.#accounts.clear();
    this.#sessionSeenAt = this.#options.clock.now().getTime();
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
          // An idle ledger writes a built batch at once rather than waiting for a group to carry it.
          if (this.#batch?.built) {
            await this.#writeBatch(db);
            continue;
          }
          if (!next) {
            await this.#waitForWork(db);
            continue;
          }
          this.#queue.shift();
          // The snapshot is taken now, between groups; the answer comes once the batch is written, while groups go on.
          void (await this.#settle(db, next.command as CloseCommand)).answer.then(next.resolve);
          continue;
        }
        // One at a time means one at a time: each isolated command is written before the next is applied.
        if (writing && this.#isolating > 0) {
          await this.#finish(db, writing);
          writing = undefined;
          continue;
        }
        // Let the requests already read from sockets in this turn of the event loop join the group first. On PGlite
        // the write runs on this thread, and a signature made in place does not wait either: without this, a group
        // would form and commit in the microtasks after each request, one pay per group.
        await new Promise<void>((resolve) => setImmediate(resolve));
        prepared = await this.#prepare(this.#takeGroup(), writing);
        // Refused before it was written (a read the database refused, a command that threw): taken again one by one.
        if (!prepared) continue;
        // The previous group's callers are answered while this group's receipts are signed on the crypto worker.
        const committed = writing ? await this.#finish(db, writing, prepared) : true;
        writing = undefined;
        if (!committed) {
          prepared = undefined;
          continue;
        }
        await prepared.signed;
        // Answers wait for the group before them even when there is nothing to write: an idempotent replay
        // of a command in that group must not overtake its commit.
        if (prepared.group.hasWrites) writing = this.#write(db, prepared);
        else {
          this.#answer(prepared);
          // Groups that write nothing never carry the batch: write it alone rather than let them hold it back.
          if (this.#batch?.built) await this.#writeBatch(db);
        }
        prepared = undefined;
      }
      if (writing) await this.#finish(db, writing);
      // Stopping: the last close's batch is still written, as `POST /v1/settle` promised.
      await this.#batch?.building;
      if (this.#batch?.built) await this.#writeBatch(db);
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
      this.#isolating = 0;
      for (const pending of this.#queue.splice(0)) pending.resolve({ ok: false, error: standbyError() });
      this.#wake = undefined;
      leadership.abort();
      await ticker;
      // A batch not written now never will be by this leader: the next one reopens its window from the database.
      const batch = this.#batch;
      this.#batch = undefined;
      batch?.reject(standbyError());
      await batch?.building;
      this.#batchFailure = undefined;
    }
  }

  /**
   * Waits for a command. On PostgreSQL a writer idle for a poll period asks its own session whether it is still
   * there: a backend that ended (a restart, a failover, pg_terminate_backend) took the lock with it, and nothing
   * else would tell before the next write failed. The query then fails and the writer steps down, to take the lock
   * again on a new connection (or stand by when another instance took it) instead of answering its next callers 503.
   */
  async #waitForWork(db: Db): Promise<void> {
    const { clock, database, takeoverPollMs } = this.#options;
    const woken = new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
    try {
      if (database.kind === 'pglite') return await woken;
      for (;;) {
        const idleFor = clock.now().getTime() - this.#sessionSeenAt;
        if (idleFor < takeoverPollMs) {
          const timer = new AbortController();
          const slept = clock.sleep(takeoverPollMs - idleFor, AbortSignal.any([timer.signal, this.#stop.signal])).then(() => 'slept' as const);
          const outcome = await Promise.race([woken.then(() => 'woken' as const), slept]);
          timer.abort();
          if (outcome === 'woken' || this.#stop.signal.aborted) return;
          continue;
        }
        await sql`select 1`.execute(db);
        this.#sessionSeenAt = clock.now().getTime();
      }
    } finally {
      this.#wake = undefined;
    }
  }

  #takeGroup(): { pending: Array<Pending & { command: MovementCommand }>; isolated: boolean } {
    const isolated = this.#isolating > 0;
    const pending: Array<Pending & { command: MovementCommand }> = [];
    while (pending.length < (isolated ? 1 : this.#options.maxGroup)) {
      const next = this.#queue[0];
      if (!next || next.command.kind === 'close') break;
      this.#queue.shift();
      pending.push(next as Pending & { command: MovementCommand });
    }
    if (isolated) this.#isolating -= pending.length;
    return { pending, isolated };
  }

  /** Reads what the commands touch (through the pool, as the group being written will leave it) and applies them in memory. */
  async #prepare(taken: { pending: Array<Pending & { command: MovementCommand }>; isolated: boolean }, writing?: InFlight): Promise<Prepared | undefined> {
    const { pending, isolated } = taken;
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
          throw new ApplyFailure(error);
        }
      });
      const signed = group.signWith((messages) =>
        // A message each way and two thread wake-ups cost more than signing one or two receipts here: small
        // groups (a lightly loaded ledger, the marketplace's hold and capture) sign in place.
        messages.length <= signInPlaceUpTo ? Promise.resolve(messages.map((message) => key.sign(message))) : this.#crypto.sign(messages),
      );
      // Awaited by the writer before the group is written, or dropped with the group (a refused write before it).
      signed.catch(() => undefined);
      return { group, pending, isolated, outcomes, signed };
    } catch (error) {
      const refusal = error instanceof ApplyFailure ? applyRefusal() : databaseRefusal(error);
      if (!refusal) {
        this.#fail(pending);
        throw error;
      }
      this.#isolate(pending, refusal, error, false);
      return undefined;
    }
  }

  /**
   * A group refused for what one of its commands carries (nothing of it applied): its commands go back to the front
   * of the queue to be applied and written one at a time, so the others land and only the one at fault is refused.
   * A command refused on its own hears `refusal`; the writer goes on. `again` sends even a lone command back (its
   * statement carried the batch too, which may have been the cause).
   */
  #isolate(pending: readonly Pending[], refusal: ServiceError, cause: unknown, again: boolean): void {
    const [only] = pending;
    if (only && pending.length === 1 && !again) {
      const log = this.#options.logger;
      (refusal.status >= 500 ? log.error : log.warn).call(
        log,
        { err: cause, command: only.command.kind },
        'the ledger refused one command for what it carries',
      );
      only.resolve({ ok: false, error: refusal });
      return;
    }
    this.#queue.unshift(...pending);
    this.#isolating += pending.length;
  }

  #write(db: Db, prepared: Prepared): InFlight {
    const firstSeq = this.#seq;
    this.#seq = prepared.group.nextSeq;
    const batch = prepared.isolated ? undefined : this.#placeBatch();
    const lastReceipt = prepared.group.receipts.at(-1);
    const headId = batch?.event_id ?? (lastReceipt ? this.#ids.transfer(lastReceipt.seq) : undefined);
    const startedAt = performance.now();
    const written = writeGroup(db, prepared.group, headId, batch).then(
      () => {
        this.#options.metrics?.groupCommitted(prepared.pending.length, (performance.now() - startedAt) / 1000);
        return undefined;
      },
      (error: unknown) => error ?? new Error('write failed'),
    );
    return { ...prepared, written, firstSeq, batch };
  }

  get #ids(): EventIds {
    if (!this.#eventIds) throw new Error('event ids are read on taking the lead');
    return this.#eventIds;
  }

  /**
   * The built batch, if one waits, with its event id: the next after the last receipt of the statement about to
   * carry it (every seq below `#seq` is committed or in that statement). Marks it as being written.
   */
  #placeBatch(): BatchTable | undefined {
    const pending = this.#batch;
    if (!pending?.built || pending.writing) return undefined;
    pending.writing = true;
    return { ...pending.built, event_id: this.#ids.anchor(this.#seq - 1n, this.#lastAnchorId) };
  }

  /** Writes the built batch on its own, between groups (nothing else is in flight). */
  async #writeBatch(db: Db): Promise<void> {
    const batch = this.#placeBatch();
    if (!batch) return;
    await writeRows(db, { batches: [batch] }, batch.event_id);
    this.#sessionSeenAt = this.#options.clock.now().getTime();
    this.#batchWritten(batch);
    this.#options.onCommitted?.(batch.event_id);
  }

  #batchWritten(batch: BatchTable): void {
    const pending = this.#batch;
    this.#batch = undefined;
    this.#lastAnchorId = batch.event_id;
    pending?.resolve(batch);
    this.#options.onBatch?.(batch);
  }

  /**
   * Waits for a group's commit, answers its callers and closes the window if due. Returns false when the statement
   * was refused (nothing of it landed) and goes again: by the idempotency guard (its commands and those of the group
   * prepared on top of it go back to the front of the queue, to be applied again with their keys read first), or for
   * what one command carries (they are applied again one at a time: see #isolate). Any other failed commit is not
   * known to be durable: nobody hears "ok" (a retry with the same idempotency_key returns the original result if it
   * did land), and the writer steps down (this throws) so the next leader starts from the database.
   */
  async #finish(db: Db, inflight: InFlight, next?: Prepared): Promise<boolean> {
    const error = await inflight.written;
    const refusal = error === undefined || isKeyConflict(error) ? undefined : databaseRefusal(error);
    if (error && (refusal || isKeyConflict(error))) {
      // Nothing of the statement landed: its batch waits for the next one.
      if (inflight.batch && this.#batch) this.#batch.writing = false;
      this.#seq = inflight.firstSeq;
      if (refusal) {
        if (next) this.#queue.unshift(...next.pending);
        this.#isolate(inflight.pending, refusal, error, inflight.batch !== undefined);
        return false;
      }
      const again = [...inflight.pending, ...(next?.pending ?? [])];
      this.#queue.unshift(...again);
      this.#verifyKeys = again.length;
      if (inflight.isolated) this.#isolating += inflight.pending.length;
      return false;
    }
    if (error) throw error;
    this.#sessionSeenAt = this.#options.clock.now().getTime();
    this.#afterCommit(inflight.group);
    if (inflight.batch) this.#batchWritten(inflight.batch);
    const lastReceipt = inflight.group.receipts.at(-1);
    const headId = inflight.batch?.event_id ?? (lastReceipt ? this.#ids.transfer(lastReceipt.seq) : undefined);
    if (headId !== undefined) this.#options.onCommitted?.(headId);
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
  }

  async #closeIfDue(db: Db, group: Group): Promise<void> {
    if (this.committedSize - this.#window.closedSize >= this.#options.window.maxReceipts) await this.#settle(db, { kind: 'close', reason: 'count' });
    else if (group.receipts.length > 0 && group.largestMicros >= this.#options.window.immediateMicros)
      await this.#settle(db, { kind: 'close', reason: 'amount' });
  }

  /**
   * Closes the open window: takes the snapshot now (between groups) and starts building the batch. Batches are
   * one at a time, so a close first writes the previous batch, waiting for its tree if need be. `answer` settles
   * once this batch is written (`POST /v1/settle` waits for it; closes by count, amount or age do not). A batch
   * that fails to be built steps the writer down (the loop checks), and the next leader reopens the window from
   * the last batch in the database.
   */
  async #settle(db: Db, command: CloseCommand): Promise<{ answer: Promise<CommandOutcome> }> {
    const { clock, key, log, chain, logger } = this.#options;
    const failed = (error: unknown): CommandOutcome => {
      logger.error({ err: error }, 'closing the window failed');
      return { ok: false, error: new ServiceError('unavailable', 'the window could not be closed; retry shortly', { retryable: true }) };
    };
    try {
      await this.#batch?.building;
      if (this.#batchFailure) throw this.#batchFailure;
      await this.#writeBatch(db);
      // Unreachable (nothing is in flight here), but a second pending batch would silently replace the first.
      if (this.#batch) throw new Error('the previous batch is not written yet');
      const started = await closeWindow({ db, log, key, now: clock.now(), crypto: this.#crypto }, this.#window, this.committedSize, command.reason);
      if (!started) return { answer: Promise.resolve({ ok: true, data: { closed: false, batch: null } }) };
      this.#window = { lastBatchNumber: started.number, closedSize: this.committedSize, openedAt: null };
      const pending = this.#startBatch(started.built);
      if (command.reason !== 'settle') return { answer: Promise.resolve({ ok: true, data: { closed: true } }) };
      return {
        answer: pending.written.then(
          ({ balance_tree: _balances, withdrawal_tree: _withdrawals, event_id: _id, ...summary }) => ({
            ok: true,
            data: { closed: true, batch: batchView(summary, chain) },
          }),
          failed,
        ),
      };
    } catch (error) {
      return { answer: Promise.resolve(failed(error)) };
    }
  }

  #startBatch(built: Promise<BuiltBatch>): PendingBatch {
    let resolve: (batch: BatchTable) => void = () => undefined;
    let reject: (error: Error) => void = () => undefined;
    const written = new Promise<BatchTable>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Nobody may be waiting (a close by count): a batch that is never written is logged where it fails.
    written.catch(() => undefined);
    const pending: PendingBatch = { built: undefined, writing: false, written, resolve, reject, building: Promise.resolve() };
    pending.building = built.then(
      (row) => {
        pending.built = row;
        this.#wake?.();
      },
      (error: unknown) => {
        this.#options.logger.error({ err: error }, 'building a batch failed');
        const failure = error instanceof Error ? error : new Error(String(error));
        this.#batchFailure ??= failure;
        pending.reject(failure);
        this.#wake?.();
      },
    );
    this.#batch = pending;
    return pending;
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
