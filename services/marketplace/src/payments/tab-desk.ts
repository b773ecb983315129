import { canonicalHash } from '@platform/kit/canonical-json';
import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { monotonicUuidv7 } from '@platform/kit/ids';
import { type CosignTerms, cosignSigningText, voucherSigningText } from '@platform/kit/marketplace-voucher';
import { parseAmount } from '@platform/kit/money';
import type { Kysely } from 'kysely';
import type { InvocationTable, ListingTable, MarketplaceSchema } from '../db/schema.ts';
import type { MarketplaceIdentity } from '../identity.ts';
import type { ManifestOperation } from '../listings/manifest-types.ts';
import { digestOf, requestDigest } from './binding.ts';
import type { CallLedger } from './call-ledger.ts';
import { type CallOutcome, type CallRequest, finishedInvocation, keyReused, outcomeOf } from './call-outcome.ts';
import { type InvocationsRepository, newInvocation } from './invocations.repository.ts';
import { callCapMicros, costMicros, money } from './pricing.ts';
import type { ProviderOutcome } from './provider-call.ts';
import type { Signatures } from './signatures.ts';
import type { LiveTab, TabKind, Tabs, TabView } from './tabs.ts';

/** A voucher as callers send it. */
export interface VoucherInput {
  sequence: unknown;
  cumulative: unknown;
  signature: unknown;
}

/** The marketplace's co-signed statement of a tab: what it has spent as of a sequence. */
export interface Cosigned extends CosignTerms {
  signer: string;
  signature: string;
}

interface Accepted {
  sequence: bigint;
  cumulative: bigint;
  voucher: { sequence: string; cumulative: string; signature: string };
}

/**
 * The voucher rail: calls paid from a tab by cumulative vouchers, and stream sessions billed by them. A voucher is
 * accepted when its sequence is past every earlier one, its cumulative covers what is spent plus the caps of the
 * calls in flight plus this call's cap, stays within the deposit, and the caller's key signed it. The caller's
 * answer waits for the ledger's group commit; the co-signed statement comes back with it.
 */
export class TabDesk {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #clock: Clock;
  readonly #identity: MarketplaceIdentity;
  readonly #tabs: Tabs;
  readonly #ledger: CallLedger;
  readonly #invocations: InvocationsRepository;
  readonly #signatures: Signatures;
  /** Voucher calls being served, by `<tab>:<sequence>` and by caller key: a racing retry waits for the first. */
  readonly #inFlight = new Map<string, Promise<CallOutcome>>();

  constructor(options: {
    db: Kysely<MarketplaceSchema>;
    clock: Clock;
    identity: MarketplaceIdentity;
    tabs: Tabs;
    ledger: CallLedger;
    invocations: InvocationsRepository;
    signatures: Signatures;
  }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#identity = options.identity;
    this.#tabs = options.tabs;
    this.#ledger = options.ledger;
    this.#invocations = options.invocations;
    this.#signatures = options.signatures;
  }

  async call(
    listing: ListingTable,
    operation: ManifestOperation,
    args: unknown,
    request: CallRequest,
    serve: (invocation: InvocationTable) => Promise<ProviderOutcome>,
  ): Promise<CallOutcome> {
    const payment = request.payment as Extract<CallRequest['payment'], { rail: 'voucher' }>;
    const live = await this.#tabs.live(request.caller, 'channel', payment.tabId);
    if (live.row.listing_id !== listing.id)
      throw new ServiceError('invalid_request', 'the channel pays another service', { details: { field: 'payment.channel_id' } });
    const requestHash = canonicalHash({ service: listing.id, operation: operation.name, args, voucher: payment.voucher });
    const key = request.idempotencyKey;
    if (key !== undefined) {
      const replay = await this.#replayByKey(request.caller, key, requestHash);
      if (replay) return replay;
    }
    const cap = callCapMicros(operation);
    this.#tabs.requireOpen(live);
    const accepted = this.#accept(live, await this.#verify(live, payment.voucher), cap, requestHash);
    if (accepted instanceof Promise) return accepted;
    const now = this.#clock.now();
    const invocation = newInvocation({
      id: monotonicUuidv7(now.getTime()),
      listing_id: listing.id,
      operation: operation.name,
      caller_did: request.caller,
      idempotency_key: key ?? `voucher:${live.row.id}:${accepted.sequence}`,
      request_hash: requestHash,
      rail: 'voucher',
      cap_micros: cap,
      hold_id: live.row.hold_id,
      channel_id: live.row.id,
      request_digest: requestDigest({ serviceId: listing.id, operation: operation.name, args }),
      started_at: now,
      tab_sequence: accepted.sequence,
    });
    const running = this.#serveAndRecord(live, operation, invocation, accepted, serve);
    const flightKeys = [`${live.row.id}:${accepted.sequence}`, ...(key === undefined ? [] : [`key:${request.caller}:${key}`])];
    for (const flightKey of flightKeys) this.#inFlight.set(flightKey, running);
    try {
      return await running;
    } finally {
      for (const flightKey of flightKeys) this.#inFlight.delete(flightKey);
    }
  }

  async #serveAndRecord(
    live: LiveTab,
    operation: ManifestOperation,
    invocation: InvocationTable,
    accepted: Accepted,
    serve: (invocation: InvocationTable) => Promise<ProviderOutcome>,
  ): Promise<CallOutcome> {
    let served: ProviderOutcome;
    try {
      served = await serve(invocation);
    } catch (error) {
      this.#tabs.settled(live, invocation.cap_micros);
      throw error;
    }
    const cost = served.ok ? costMicros(operation, served.units, invocation.cap_micros) : 0n;
    live.row.spent_micros += cost;
    // The tab as of this call, unsigned: signing it on every call cost as much as checking the voucher. The
    // signed statement is POST /v1/vouchers/cosign's, whenever the caller wants one.
    const tab = { id: live.row.id, sequence: accepted.sequence.toString(), authorized: money(live.row.authorized_micros), spent: money(live.row.spent_micros) };
    const finished = finishedInvocation(invocation, served, cost, this.#clock.now(), { tab });
    try {
      await this.#ledger.record({
        tabId: live.row.id,
        listingId: invocation.listing_id,
        sequence: accepted.sequence,
        cumulative: accepted.cumulative,
        voucher: accepted.voucher,
        cost,
        invocation: finished,
        outcome: { success: served.ok, latencyMs: served.latencyMs },
      });
    } catch (error) {
      // The database did not take it: what this process believed of the tab may be ahead of it.
      this.#tabs.forget(live.row.id);
      throw error;
    } finally {
      this.#tabs.settled(live, invocation.cap_micros);
    }
    return outcomeOf(finished);
  }

  /**
   * Checks a verified voucher against the tab and, when it pays, takes it: the tab's sequence and authorization
   * move forward and the call's cap is reserved, synchronously (no await between the checks and the taking), so
   * two calls racing on one tab can never both count on the same headroom. A sequence already used is a replay:
   * the call it paid answers again when it is the same request, otherwise it is refused.
   */
  #accept(live: LiveTab, voucher: Accepted, cap: bigint, requestHash: string): Accepted | Promise<CallOutcome> {
    // Again: the tab may have closed while the signature was checked.
    this.#tabs.requireOpen(live);
    if (voucher.sequence <= live.row.sequence) return this.#replayBySequence(live, voucher.sequence, requestHash);
    const needed = live.row.spent_micros + live.reserved + cap;
    if (voucher.cumulative < needed)
      throw new ServiceError('payment_required', `the voucher must allow at least ${money(needed)} (spent, calls in flight and this call’s cap)`, {
        details: { reason: 'voucher_too_small', needed: money(needed), spent: money(live.row.spent_micros), cap: money(cap) },
      });
    this.#take(live, voucher);
    live.reserved += cap;
    live.inFlight += 1;
    return voucher;
  }

  #take(live: LiveTab, voucher: Accepted): void {
    live.row.sequence = voucher.sequence;
    if (voucher.cumulative > live.row.authorized_micros) live.row.authorized_micros = voucher.cumulative;
    live.row.last_voucher = voucher.voucher;
  }

  /** Shape, deposit and the caller's signature (what does not depend on the tab's moving state). */
  async #verify(live: LiveTab, input: VoucherInput): Promise<Accepted> {
    const refuse = (message: string, field: string) => new ServiceError('invalid_request', `voucher: ${message}`, { details: { field: `voucher.${field}` } });
    if (typeof input.sequence !== 'string' || !/^[1-9][0-9]{0,17}$/.test(input.sequence))
      throw refuse('sequence must be a positive integer as a string', 'sequence');
    const cumulative = parseAmount(input.cumulative);
    if (!cumulative.ok) throw refuse(`cumulative: ${cumulative.reason}`, 'cumulative');
    if (typeof input.signature !== 'string') throw refuse('signature must be 128 hex characters', 'signature');
    if (cumulative.micros > live.row.deposit_micros)
      throw new ServiceError('payment_required', `the voucher allows more than the ${live.row.kind}’s deposit of ${money(live.row.deposit_micros)}`, {
        details: { reason: 'voucher_exceeds_deposit', deposit: money(live.row.deposit_micros) },
      });
    const terms = { kind: live.row.kind, id: live.row.id, service_id: live.row.listing_id, sequence: input.sequence, cumulative: money(cumulative.micros) };
    if (!(await this.#signatures.verify(live.row.caller_public_key, voucherSigningText(terms), input.signature)))
      throw new ServiceError('unauthorized', 'the voucher is not signed by the key that opened the tab', { details: { reason: 'voucher_signature' } });
    return {
      sequence: BigInt(input.sequence),
      cumulative: cumulative.micros,
      voucher: { sequence: input.sequence, cumulative: terms.cumulative, signature: input.signature },
    };
  }

  async #replayBySequence(live: LiveTab, sequence: bigint, requestHash: string): Promise<CallOutcome> {
    const running = this.#inFlight.get(`${live.row.id}:${sequence}`);
    const earlier = running
      ? undefined
      : await this.#db.selectFrom('invocations').selectAll().where('channel_id', '=', live.row.id).where('tab_sequence', '=', sequence).executeTakeFirst();
    if (running || earlier) {
      const outcome = running ? await running : outcomeOf(earlier as InvocationTable);
      const paid = running ? undefined : (earlier as InvocationTable).request_hash;
      if (paid === undefined || paid === requestHash) return outcome;
    }
    throw staleVoucher(live, sequence);
  }

  async #replayByKey(caller: string, key: string, requestHash: string): Promise<CallOutcome | undefined> {
    const running = this.#inFlight.get(`key:${caller}:${key}`);
    if (running) return running;
    const earlier = await this.#invocations.byKey(caller, key);
    if (!earlier) return undefined;
    if (earlier.request_hash !== requestHash) throw keyReused(earlier.id);
    return outcomeOf(earlier);
  }

  #cosign(live: LiveTab, sequence: bigint): Cosigned {
    const terms: CosignTerms = {
      kind: live.row.kind,
      id: live.row.id,
      sequence: sequence.toString(),
      authorized: money(live.row.authorized_micros),
      spent: money(live.row.spent_micros),
    };
    return { ...terms, signer: this.#identity.agent.did, signature: this.#identity.agent.sign(cosignSigningText(terms)) };
  }

  /**
   * `POST /v1/vouchers/cosign`: a voucher without a call. A new one raises what the caller allows (nothing is
   * spent); the current one again returns the marketplace's statement as it stands. Either way the answer is
   * the co-signed statement of the tab.
   */
  async cosign(caller: string, kind: TabKind, id: string, input: VoucherInput): Promise<Cosigned> {
    const live = await this.#tabs.live(caller, kind, id);
    this.#tabs.requireOpen(live);
    const voucher = await this.#verify(live, input);
    this.#tabs.requireOpen(live);
    if (voucher.sequence < live.row.sequence || (voucher.sequence === live.row.sequence && !sameVoucher(live.row.last_voucher, voucher.voucher)))
      throw staleVoucher(live, voucher.sequence);
    if (voucher.sequence > live.row.sequence) {
      if (voucher.cumulative < live.row.spent_micros + live.reserved)
        throw new ServiceError('payment_required', 'the voucher allows less than is already spent', {
          details: { reason: 'voucher_too_small', spent: money(live.row.spent_micros) },
        });
      this.#take(live, voucher);
      await this.#ledger.record({
        tabId: id,
        listingId: live.row.listing_id,
        sequence: voucher.sequence,
        cumulative: voucher.cumulative,
        voucher: voucher.voucher,
        cost: 0n,
      });
    }
    return this.#cosign(live, live.row.sequence);
  }

  /**
   * `POST /v1/streams/{id}/settle`: the caller's voucher for the units used so far of the session's operation
   * (cumulative = units × unit price, never less than before). The difference is billed as one stream invocation.
   */
  async settleStream(
    caller: string,
    id: string,
    input: VoucherInput & { units: unknown },
  ): Promise<{ stream: TabView; voucher: Cosigned; invocation_id: string | null }> {
    const live = await this.#tabs.live(caller, 'stream', id);
    this.#tabs.requireOpen(live);
    const voucher = await this.#verify(live, input);
    this.#tabs.requireOpen(live);
    if (voucher.sequence <= live.row.sequence) throw staleVoucher(live, voucher.sequence);
    const price = live.row.unit_price_micros ?? 0n;
    if (typeof input.units !== 'string' || !/^(0|[1-9][0-9]{0,17})$/.test(input.units))
      throw new ServiceError('invalid_request', 'units must be a non-negative integer as a string (the units used so far)', { details: { field: 'units' } });
    const units = BigInt(input.units);
    if (units * price !== voucher.cumulative)
      throw new ServiceError('invalid_request', `cumulative must be units × the unit price (${money(units * price)})`, { details: { field: 'cumulative' } });
    const cost = voucher.cumulative - live.row.spent_micros;
    if (cost < 0n)
      throw new ServiceError('conflict', 'the units used cannot go down', {
        details: { reason: 'stream_units_decreased', spent: money(live.row.spent_micros) },
      });
    this.#take(live, voucher);
    live.row.spent_micros = voucher.cumulative;
    const now = this.#clock.now();
    const billedUnits = price === 0n ? 0n : cost / price;
    const invocation =
      cost === 0n
        ? undefined
        : newInvocation({
            id: monotonicUuidv7(now.getTime()),
            listing_id: live.row.listing_id,
            operation: live.row.operation ?? '',
            caller_did: caller,
            idempotency_key: `stream:${id}:${voucher.sequence}`,
            request_hash: digestOf(voucher.voucher),
            rail: 'stream',
            status: 'succeeded',
            cap_micros: cost,
            cost_micros: cost,
            units: billedUnits,
            hold_id: live.row.hold_id,
            channel_id: id,
            request_digest: digestOf({ stream_id: id, units: input.units }),
            response_digest: digestOf({ spent: money(voucher.cumulative) }),
            latency_ms: 0,
            started_at: now,
            finished_at: now,
            tab_sequence: voucher.sequence,
          });
    await this.#ledger.record({
      tabId: id,
      listingId: live.row.listing_id,
      sequence: voucher.sequence,
      cumulative: voucher.cumulative,
      voucher: voucher.voucher,
      cost,
      ...(invocation ? { invocation } : {}),
    });
    return { stream: this.#tabs.view(live), voucher: this.#cosign(live, voucher.sequence), invocation_id: invocation?.id ?? null };
  }

  async close(caller: string, kind: TabKind, id: string): Promise<TabView> {
    const live = await this.#tabs.live(caller, kind, id);
    if (live.row.status === 'closed') return this.#tabs.view(live);
    return this.#tabs.close(live, () => this.#ledger.flushed());
  }
}

/** A voucher whose sequence is already used (for anything but the same call again). */
function staleVoucher(live: LiveTab, sequence: bigint): ServiceError {
  return new ServiceError('conflict', `voucher ${sequence} is stale: the ${live.row.kind} is at sequence ${live.row.sequence}; sign the next one`, {
    details: { reason: 'voucher_stale', sequence: live.row.sequence.toString() },
  });
}

function sameVoucher(stored: unknown, voucher: Accepted['voucher']): boolean {
  const last = stored as Accepted['voucher'] | null;
  return last !== null && last.sequence === voucher.sequence && last.cumulative === voucher.cumulative && last.signature === voucher.signature;
}
