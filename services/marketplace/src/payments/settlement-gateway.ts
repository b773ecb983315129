import type { AgentKey } from '@platform/client/agent-key';
import { ServiceError } from '@platform/kit/errors';
import { type JsonAnswer, type JsonClient, JsonClientError } from '@platform/kit/http/json-client';
import { formatAmount } from '@platform/kit/money';

/** A hold as settlement shows it. */
export interface HoldView {
  id: string;
  payer: string;
  payee: string;
  amount: string;
  captured: string;
  returned: string;
  status: 'open' | 'captured' | 'released' | 'expired';
  expires_at: string;
}

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

interface Envelope {
  ok?: boolean;
  data?: unknown;
  error?: { code?: string; message?: string; reason?: string; retryable?: boolean };
}

/**
 * The marketplace's side of settlement. Holds are placed with the caller's signed intent (the intent alone
 * authorises them; settlement checks it again and consumes its nonce); captures, releases and payouts are the
 * marketplace's own, as the holds' beneficiary, with its principal token from the DID handshake. Every write
 * carries an idempotency key derived from the marketplace's own record, so a retry after a lost answer never
 * moves funds twice. Refusals a caller can act on are `PaymentRefused`; an unreachable or failing settlement is
 * 503 `payment_unavailable`.
 */
export class SettlementGateway {
  readonly #baseUrl: string;
  readonly #ledgerToken: string;
  readonly #agent: AgentKey;
  readonly #client: JsonClient;
  #token: string | undefined;
  #authenticating: Promise<string> | undefined;

  constructor(options: { baseUrl: string; ledgerToken: string; agent: AgentKey; client: JsonClient }) {
    this.#baseUrl = options.baseUrl;
    this.#ledgerToken = options.ledgerToken;
    this.#agent = options.agent;
    this.#client = options.client;
  }

  /** The marketplace's DID at settlement: the payee of every hold. */
  get did(): string {
    return this.#agent.did;
  }

  placeHold(
    intentWire: string,
    terms: { amount: string; ref: string; expiresInSeconds: number; idempotencyKey: string },
  ): Promise<{ hold: HoldView; seq: number }> {
    return this.#write('/v1/hold', {
      to: this.#agent.did,
      amount: terms.amount,
      ref: terms.ref,
      intent: intentWire,
      expires_in_seconds: terms.expiresInSeconds,
      idempotency_key: terms.idempotencyKey,
    }) as Promise<{ hold: HoldView; seq: number }>;
  }

  /** Takes `amount` of the hold (the rest returns to the payer at once). */
  capture(holdId: string, amount: string, idempotencyKey: string): Promise<{ hold: HoldView; seqs: number[] }> {
    return this.#write(`/v1/hold/${holdId}/capture`, { amount, idempotency_key: idempotencyKey }, true) as Promise<{ hold: HoldView; seqs: number[] }>;
  }

  /** Returns the whole hold to the payer. */
  release(holdId: string, idempotencyKey: string): Promise<{ hold: HoldView; seq: number }> {
    return this.#write(`/v1/hold/${holdId}/release`, { idempotency_key: idempotencyKey }, true) as Promise<{ hold: HoldView; seq: number }>;
  }

  /**
   * Ends a hold the marketplace is owed `micros` of: captures that much (settlement returns the rest to the payer
   * in the same movement), or releases it all when nothing is owed. Returns the settlement seq that ended it, and
   * whether anything was captured. A hold that had already expired or closed ends with `seq` 0 and nothing
   * captured: the payer got its money back and the marketplace was not paid (logged by the caller).
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
    return this.#write('/v1/pay', { to, amount, ref, idempotency_key: idempotencyKey }, true) as Promise<{ seq: number }>;
  }

  async hold(holdId: string): Promise<HoldView | undefined> {
    const answer = await this.#send('GET', `/v1/hold/${holdId}`, undefined, false);
    if (answer.status === 404) return undefined;
    return this.#data(answer) as HoldView;
  }

  /** The marketplace's own account (its balance is what payouts can draw on). */
  async balance(): Promise<{ balance: string; held: string }> {
    return this.#data(await this.#send('GET', '/v1/balance', undefined, true)) as { balance: string; held: string };
  }

  async #write(path: string, body: unknown, asBeneficiary = false): Promise<unknown> {
    let answer = await this.#send('POST', path, body, asBeneficiary);
    if (answer.status === 401 && asBeneficiary && /principal token/.test(this.#message(answer))) {
      // The token expired: one handshake more.
      this.#token = undefined;
      answer = await this.#send('POST', path, body, asBeneficiary);
    }
    return this.#data(answer);
  }

  async #send(method: string, path: string, body: unknown, withPrincipal: boolean): Promise<JsonAnswer> {
    const headers: Record<string, string> = {};
    if (this.#ledgerToken !== '') headers.authorization = `Bearer ${this.#ledgerToken}`;
    if (withPrincipal) headers['x-ledger-agent'] = await this.#principal();
    try {
      return await this.#client.request(method, new URL(path, this.#baseUrl), { headers, body });
    } catch (error) {
      if (error instanceof JsonClientError) throw unavailable(`settlement did not answer: ${error.message}`);
      throw error;
    }
  }

  #data(answer: JsonAnswer): unknown {
    const envelope = (answer.json ?? {}) as Envelope;
    if (answer.status === 200 && envelope.ok === true) return envelope.data;
    const error = envelope.error ?? {};
    if (answer.status >= 500 || answer.status === 429 || error.retryable === true)
      throw unavailable(`settlement answered ${answer.status} ${error.code ?? ''}: ${error.message ?? answer.text.slice(0, 200)}`);
    throw new PaymentRefused(answer.status, error.code ?? 'unknown', error.message ?? `settlement answered ${answer.status}`, error.reason);
  }

  #message(answer: JsonAnswer): string {
    return ((answer.json ?? {}) as Envelope).error?.message ?? '';
  }

  #principal(): Promise<string> {
    if (this.#token !== undefined) return Promise.resolve(this.#token);
    this.#authenticating ??= this.#handshake().finally(() => {
      this.#authenticating = undefined;
    });
    return this.#authenticating;
  }

  async #handshake(): Promise<string> {
    const challenge = this.#data(await this.#send('POST', '/v1/agent/auth/challenge', { did: this.#agent.did }, false)) as { nonce: string; message: string };
    const session = this.#data(
      await this.#send(
        'POST',
        '/v1/agent/auth/verify',
        { did: this.#agent.did, public_key: this.#agent.publicKeyHex, nonce: challenge.nonce, signature: this.#agent.sign(challenge.message) },
        false,
      ),
    ) as { token: string };
    this.#token = session.token;
    return session.token;
  }
}

function unavailable(message: string): ServiceError {
  return new ServiceError('payment_unavailable', message, { details: { reason: 'settlement_unavailable' } });
}
