import type { AgentKey } from '@platform/client/agent-key';
import { ServiceCallError, type SessionTransport } from '@platform/client/service-session';
import {
  type BatchOutcome,
  type HoldRequest,
  type HoldView,
  type SettleItem,
  SettlementClient,
  settlementBatchItems,
} from '@platform/client/settlement-client';
import { ServiceError } from '@platform/kit/errors';
import { GroupCommit } from '@platform/kit/group-commit';
import { type JsonClient, JsonClientError } from '@platform/kit/http/json-client';
import { formatAmount } from '@platform/kit/money';

/** Settlement refused to move funds for a reason the caller can act on (bad intent, insufficient funds, …). */
export class PaymentRefused extends Error {
  readonly status: number;
  readonly code: string;
  readonly reason: string | undefined;
  constructor(status: number, code: string, message: string, reason: string | undefined) {
    super(message);
    this.name = 'PaymentRefused';
    this.status = status;
    this.code = code;
    this.reason = reason;
  }
}

/**
 * The marketplace's side of settlement: the platform's settlement client (its session runs the DID handshake and
 * renews the principal token) over the kit's keep-alive JSON client, this being every paid call's hot path. Holds
 * are placed with the caller's signed intent alone (settlement checks it again and consumes its nonce); captures,
 * releases and payouts are the marketplace's own, as the holds' beneficiary. Every write carries an idempotency key
 * derived from the marketplace's own record, so a retry after a lost answer never moves funds twice. Refusals a
 * caller can act on are `PaymentRefused`; an unreachable or failing settlement is 503 `payment_unavailable`.
 */
export class SettlementGateway {
  readonly #agent: AgentKey;
  readonly #client: SettlementClient;
  /**
   * Holds, captures and releases asked for in one turn of the event loop go to settlement as one batch request each:
   * at load, a group of calls finishing together (one commit of the call ledger) asks for dozens at once, and each
   * request cost settlement its HTTP, bearer and token checks and a wake-up, and the marketplace a request of its own.
   */
  readonly #holds: GroupCommit<HoldRequest, BatchOutcome<{ hold: HoldView; seq: number }>>;
  readonly #settles: GroupCommit<SettleItem, BatchOutcome<{ hold: HoldView; seq?: number; seqs?: number[] }>>;

  constructor(options: { baseUrl: string; ledgerToken: string; agent: AgentKey; client: JsonClient }) {
    this.#agent = options.agent;
    const client = new SettlementClient({
      baseUrl: options.baseUrl,
      key: options.agent,
      ...(options.ledgerToken === '' ? {} : { transportToken: options.ledgerToken }),
      transport: overJsonClient(options.client),
    });
    this.#client = client;
    // Unkeyed, and as many in flight as there are: a batch waits for nothing but the end of its turn.
    const batching = { maxBatch: settlementBatchItems, maxInFlight: Number.POSITIVE_INFINITY };
    this.#holds = new GroupCommit((items) => client.placeHolds(items), { ...batching, span: 'settlement hold batch' });
    this.#settles = new GroupCommit((items) => client.settleHolds(items), { ...batching, span: 'settlement settle batch' });
  }

  /** The marketplace's DID at settlement: the payee of every hold. */
  get did(): string {
    return this.#agent.did;
  }

  placeHold(
    intentWire: string,
    terms: { amount: string; ref: string; expiresInSeconds: number; idempotencyKey: string },
  ): Promise<{ hold: HoldView; seq: number }> {
    return batched(this.#holds, {
      to: this.#agent.did,
      amount: terms.amount,
      ref: terms.ref,
      intent: intentWire,
      expires_in_seconds: terms.expiresInSeconds,
      idempotency_key: terms.idempotencyKey,
    });
  }

  /** Takes `amount` of the hold (the rest returns to the payer at once). */
  async capture(holdId: string, amount: string, idempotencyKey: string): Promise<{ hold: HoldView; seqs: number[] }> {
    const captured = await batched(this.#settles, { hold_id: holdId, action: 'capture', amount, idempotency_key: idempotencyKey });
    return { hold: captured.hold, seqs: captured.seqs ?? [] };
  }

  /** Returns the whole hold to the payer. */
  async release(holdId: string, idempotencyKey: string): Promise<{ hold: HoldView; seq: number }> {
    const released = await batched(this.#settles, { hold_id: holdId, action: 'release', idempotency_key: idempotencyKey });
    return { hold: released.hold, seq: released.seq ?? 0 };
  }

  /**
   * Ends a hold the marketplace is owed `micros` of: captures that much (settlement returns the rest to the payer
   * in the same movement), or releases it all when nothing is owed. Returns the settlement seq that ended it, and
   * what was captured. A hold that had already expired or closed ends with `seq` 0 and nothing captured: the payer
   * got its money back and the marketplace was not paid (logged by the caller).
   */
  async settle(holdId: string, micros: bigint, key: string): Promise<{ seq: bigint; captured: bigint }> {
    try {
      if (micros > 0n) return { seq: BigInt((await this.capture(holdId, formatAmount(micros), `${key}:capture`)).seqs[0] ?? 0), captured: micros };
      return { seq: BigInt((await this.release(holdId, `${key}:release`)).seq), captured: 0n };
    } catch (error) {
      if (error instanceof PaymentRefused && (error.reason === 'hold_expired' || error.reason === 'hold_closed')) return { seq: 0n, captured: 0n };
      throw error;
    }
  }

  /** Pays from the marketplace's own account (developer payouts). */
  pay(to: string, amount: string, ref: string, idempotencyKey: string): Promise<{ seq: number }> {
    return refusals(() => this.#client.pay({ to, amount, ref, idempotency_key: idempotencyKey }));
  }
}

/** The session's requests over the keep-alive client; a settlement that cannot be reached is `payment_unavailable`. */
function overJsonClient(client: JsonClient): SessionTransport {
  return async (method, url, init) => {
    try {
      const answer = await client.request(method, url, init);
      return { status: answer.status, json: answer.json };
    } catch (error) {
      if (error instanceof JsonClientError) throw unavailable(`settlement did not answer: ${error.message}`);
      throw error;
    }
  };
}

/** Settlement's answers as the marketplace acts on them: failing or busy is unavailable; anything else refused. */
async function refusals<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ServiceCallError)) throw error;
    if (error.status >= 500 || error.status === 429 || error.retryable) throw unavailable(`settlement answered ${error.message}`);
    throw new PaymentRefused(error.status, error.code, error.message, error.reason);
  }
}

function unavailable(message: string): ServiceError {
  return new ServiceError('payment_unavailable', message, { details: { reason: 'settlement_unavailable' } });
}

/** One item through a batch: its value, or the error settlement answered for that item alone, as `refusals` maps it. */
function batched<Item, T>(batches: GroupCommit<Item, BatchOutcome<T>>, item: Item): Promise<T> {
  return refusals(async () => {
    const outcome = await batches.submit(item);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  });
}
