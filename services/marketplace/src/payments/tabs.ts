import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { isUuid, uuidv7 } from '@platform/kit/ids';
import { parseAmount } from '@platform/kit/money';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ListingTable, MarketplaceSchema, TabTable } from '../db/schema.ts';
import { tabRef } from './binding.ts';
import { activeListing, money, operationOf, unitPriceMicros } from './pricing.ts';
import { PaymentRefused, type SettlementGateway } from './settlement-gateway.ts';
import { checkPayment, type PaymentTerms, paymentRequired, refusedHold } from './terms.ts';

export type TabKind = TabTable['kind'];

/** A channel or stream session as its caller sees it. */
export interface TabView {
  id: string;
  kind: TabKind;
  service_id: string;
  operation: string | null;
  unit_price: string | null;
  deposit: string;
  spent: string;
  authorized: string;
  sequence: string;
  status: TabTable['status'];
  hold_id: string;
  expires_at: string;
  created_at: string;
  closed_at: string | null;
  /** The settlement receipt of the closing capture (or release). */
  settlement_seq: string | null;
}

/** What this process knows of an open tab beyond its row: the caps of calls being served, and who waits to close it. */
export interface LiveTab {
  row: TabTable;
  /** Caps of calls in flight: the caller's vouchers must cover spent + reserved. */
  reserved: bigint;
  inFlight: number;
  closing: boolean;
  idle: Array<() => void>;
}

export const tabLimits = { minSeconds: 60, defaultSeconds: 3600, maxSeconds: 7 * 86_400 };
/** A tab's hold outlives the tab by this much: time to close it (capture) after expiry. */
const holdMarginSeconds = 3600;

export interface OpenRequest {
  kind: TabKind;
  caller: string;
  serviceId: string;
  operation: unknown;
  deposit: unknown;
  expiresInSeconds: unknown;
  idempotencyKey: string | undefined;
  wire: string | undefined;
}

/**
 * Tabs: funds locked once by a settlement hold (the caller's signed intent for the deposit), spent by vouchers,
 * and closed by one capture of what was spent (settlement returns the rest in the same movement). Opening is
 * idempotent on the caller's key (or the intent's nonce): racing opens with one key share one hold and one tab.
 */
export class Tabs {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #settlement: SettlementGateway;
  readonly #settings: { paymentTtlSeconds: number; settlementUrl: string };
  readonly #live = new Map<string, LiveTab>();

  constructor(options: {
    db: Kysely<MarketplaceSchema>;
    clock: Clock;
    logger: Logger;
    settlement: SettlementGateway;
    settings: { paymentTtlSeconds: number; settlementUrl: string };
  }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#settlement = options.settlement;
    this.#settings = options.settings;
  }

  async open(request: OpenRequest): Promise<{ created: boolean; view: TabView }> {
    const listing = await activeListing(this.#db, request.serviceId);
    const operation = request.kind === 'stream' ? operationOf(listing, request.operation) : undefined;
    if (request.kind === 'channel' && request.operation !== undefined)
      throw new ServiceError('invalid_request', 'a channel pays any operation of the service; name the operation on each call', {
        details: { field: 'operation' },
      });
    const deposit = parseAmount(request.deposit);
    if (!deposit.ok) throw new ServiceError('invalid_request', `deposit: ${deposit.reason}`, { details: { field: 'deposit' } });
    const seconds = request.expiresInSeconds ?? tabLimits.defaultSeconds;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < tabLimits.minSeconds || seconds > tabLimits.maxSeconds)
      throw new ServiceError('invalid_request', `expires_in_seconds must be an integer from ${tabLimits.minSeconds} to ${tabLimits.maxSeconds}`, {
        details: { field: 'expires_in_seconds' },
      });
    const terms = this.#terms(request, listing, operation?.name ?? null, money(deposit.micros), seconds);
    if (request.wire === undefined)
      throw paymentRequired(
        terms,
        `opening a ${request.kind} locks its deposit: sign a hold of ${terms.amount} for ${terms.pay_to} and send it as X-Ledger-Payment`,
      );
    const payment = checkPayment(request.wire, terms, request.caller, this.#clock.now());
    const key = request.idempotencyKey ?? `intent:${payment.intent.nonce}`;
    const existing = await this.#byKey(request.caller, key);
    if (existing) return { created: false, view: tabView(existing) };
    let holdId: string;
    try {
      const placed = await this.#settlement.placeHold(request.wire, {
        amount: terms.amount,
        ref: terms.ref,
        expiresInSeconds: seconds + holdMarginSeconds,
        // Settlement scopes keys to the payer: racing opens with one key place one hold.
        idempotencyKey: `mkt:tab:${key}`,
      });
      holdId = placed.hold.id;
    } catch (error) {
      if (error instanceof PaymentRefused) throw refusedHold(terms, error);
      throw error;
    }
    const now = this.#clock.now();
    const row: TabTable = {
      id: uuidv7(now.getTime()),
      kind: request.kind,
      caller_did: request.caller,
      caller_public_key: payment.publicKeyHex,
      listing_id: listing.id,
      operation: operation?.name ?? null,
      unit_price_micros: operation ? unitPriceMicros(operation) : null,
      hold_id: holdId,
      deposit_micros: deposit.micros,
      spent_micros: 0n,
      authorized_micros: 0n,
      sequence: 0n,
      last_voucher: null,
      status: 'open',
      expires_at: new Date(now.getTime() + seconds * 1000),
      created_at: now,
      closed_at: null,
      capture_seq: null,
      idempotency_key: key,
    };
    const inserted = await this.#db
      .insertInto('tabs')
      .values(row)
      .onConflict((conflict) => conflict.columns(['caller_did', 'idempotency_key']).where('idempotency_key', '<>', '').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return { created: false, view: tabView((await this.#byKey(request.caller, key)) as TabTable) };
    return { created: true, view: tabView(row) };
  }

  #terms(request: OpenRequest, listing: ListingTable, operation: string | null, deposit: string, seconds: number): PaymentTerms {
    const expiresAt = new Date(this.#clock.now().getTime() + this.#settings.paymentTtlSeconds * 1000);
    return {
      scheme: 'platform-settlement-hold-v1',
      pay_to: this.#settlement.did,
      amount: deposit,
      purpose: 'hold',
      ref: tabRef({ kind: request.kind, serviceId: listing.id, operation, caller: request.caller, deposit, key: `${seconds}:${request.idempotencyKey ?? ''}` }),
      expires_at: expiresAt.toISOString(),
      settlement_url: this.#settings.settlementUrl,
      for: { kind: request.kind, service_id: listing.id, operation, deposit, expires_in_seconds: seconds },
    };
  }

  #byKey(caller: string, key: string): Promise<TabTable | undefined> {
    return this.#db.selectFrom('tabs').selectAll().where('caller_did', '=', caller).where('idempotency_key', '=', key).executeTakeFirst();
  }

  /** The caller's tab of this kind, as this process tracks it; 404 for anyone else's (no probing). */
  async live(caller: string, kind: TabKind, id: string): Promise<LiveTab> {
    const known = this.#live.get(id);
    if (known && known.row.caller_did === caller && known.row.kind === kind) return known;
    if (known) throw notFound(kind);
    if (!isUuid(id)) throw notFound(kind);
    const row = await this.#db.selectFrom('tabs').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || row.caller_did !== caller || row.kind !== kind) throw notFound(kind);
    const live: LiveTab = this.#live.get(id) ?? { row, reserved: 0n, inFlight: 0, closing: false, idle: [] };
    if (row.status === 'open') this.#live.set(id, live);
    return live;
  }

  view(live: LiveTab): TabView {
    return tabView(live.row);
  }

  /** Forgets what this process knew of a tab (after a failed write: the database is the truth). */
  forget(id: string): void {
    this.#live.delete(id);
  }

  /** A tab's calls may go on: open, not closing, not expired. */
  requireOpen(live: LiveTab): void {
    if (live.closing || live.row.status !== 'open')
      throw new ServiceError('conflict', `the ${live.row.kind} is ${live.row.status === 'open' ? 'closing' : live.row.status}`, {
        details: { reason: 'tab_closed', id: live.row.id },
      });
    if (live.row.expires_at.getTime() <= this.#clock.now().getTime())
      throw new ServiceError('conflict', `the ${live.row.kind} expired at ${live.row.expires_at.toISOString()}; close it and open another`, {
        details: { reason: 'tab_expired', id: live.row.id },
      });
  }

  /** A call on the tab ended (its cap no longer reserved); wakes a waiting close once the tab is idle. */
  settled(live: LiveTab, cap: bigint): void {
    live.reserved -= cap;
    live.inFlight -= 1;
    if (live.inFlight === 0) for (const wake of live.idle.splice(0)) wake();
  }

  /**
   * Closes a tab: no new calls, waits for those in flight and their writes (`flushed`), then one capture of what
   * was spent (or a release of all of it). A settlement that cannot be reached leaves the tab `closing`: the
   * sweep finishes it with the same idempotency key, so it is never captured twice.
   */
  async close(live: LiveTab, flushed: () => Promise<void>): Promise<TabView> {
    live.closing = true;
    if (live.inFlight > 0) await new Promise<void>((resolve) => live.idle.push(resolve));
    await flushed();
    return this.finishClose(live.row.id);
  }

  /** Closes a tab by id (the sweep): through this process's live state when it has one, so calls in flight finish first. */
  async closeById(id: string, flushed: () => Promise<void>): Promise<TabView> {
    const live = this.#live.get(id);
    return live ? this.close(live, flushed) : this.finishClose(id);
  }

  async finishClose(id: string): Promise<TabView> {
    const row = await this.#db
      .updateTable('tabs')
      .set({ status: 'closing' })
      .where('id', '=', id)
      .where('status', 'in', ['open', 'closing'])
      .returningAll()
      .executeTakeFirst();
    if (!row) {
      this.#live.delete(id);
      return tabView(await this.#db.selectFrom('tabs').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    }
    const { seq, captured } = await this.#settlement.settle(row.hold_id, row.spent_micros, `mkt:tab:${id}:close`);
    if (captured < row.spent_micros)
      this.#logger.warn({ tab: id, spent: money(row.spent_micros) }, 'the tab’s hold had ended before its close: nothing was captured');
    const closed = await this.#db
      .updateTable('tabs')
      .set({ status: 'closed', capture_seq: seq, closed_at: this.#clock.now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    this.#live.delete(id);
    this.#logger.info({ tab: id, kind: closed.kind, spent: money(closed.spent_micros), seq: seq.toString() }, 'tab closed');
    return tabView(closed);
  }

  /** Tabs to close now: expired while open, or left `closing` by a settlement that did not answer. */
  due(limit: number): Promise<Array<{ id: string }>> {
    return this.#db
      .selectFrom('tabs')
      .select('id')
      .where((eb) => eb.or([eb('status', '=', 'closing'), eb.and([eb('status', '=', 'open'), eb('expires_at', '<=', this.#clock.now())])]))
      .orderBy('expires_at')
      .limit(limit)
      .execute();
  }
}

function notFound(kind: TabKind): ServiceError {
  return new ServiceError('not_found', `${kind} not found`);
}

export function tabView(row: TabTable): TabView {
  return {
    id: row.id,
    kind: row.kind,
    service_id: row.listing_id,
    operation: row.operation,
    unit_price: row.unit_price_micros === null ? null : money(row.unit_price_micros),
    deposit: money(row.deposit_micros),
    spent: money(row.spent_micros),
    authorized: money(row.authorized_micros),
    sequence: row.sequence.toString(),
    status: row.status,
    hold_id: row.hold_id,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    closed_at: row.closed_at?.toISOString() ?? null,
    settlement_seq: row.capture_seq === null ? null : row.capture_seq.toString(),
  };
}
