import type { AgentKey } from './agent-key-type.ts';
import { callError, type ServiceCallError, ServiceSession, type SessionTransport } from './service-session.ts';

export interface AccountView {
  did: string;
  balance: string;
  held: string;
  escrow_bound: string;
  payout_address: string | null;
}

export interface PayRequest {
  to: string;
  /** Decimal string, at most 6 places. */
  amount: string;
  /** A 32-byte binding digest, `0x` + 64 hex. */
  ref?: string;
  idempotency_key?: string;
}

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

export interface DepositInstructions {
  chain_id: number;
  vault_address: string | null;
  token_address: string | null;
  token_decimals: number;
  did: string;
  claim: { account: string; did_hash: string; call: string };
  steps: string[];
  confirmations: number | null;
}

export interface WithdrawalView {
  id: string;
  did: string;
  amount: string;
  payout_address: string;
  swap_out: string | null;
  status: 'pending' | 'broadcast' | 'confirmed' | 'failed';
  seq: number;
  batch_number: number | null;
  tx_hash: string | null;
  block_number: number | null;
  attempts: number;
  last_error: string | null;
  created_at: string;
}

/** Items in one batch request (`POST /v1/hold/batch`, `/v1/hold/batch/settle`): settlement's limit. */
export const settlementBatchItems = 64;

/** A hold placed by its payer's signed intent (the wire form), for `to`. */
export interface HoldRequest {
  to: string;
  amount: string;
  ref: string;
  intent: string;
  expires_in_seconds: number;
  idempotency_key?: string;
}

/** One capture (`amount`, default all) or release of a settle batch. */
export interface SettleItem {
  hold_id: string;
  action: 'capture' | 'release';
  amount?: string;
  idempotency_key?: string;
}

/** One item's answer in a batch: its data, or the error its single route would have answered. */
export type BatchOutcome<T> = { ok: true; value: T } | { ok: false; error: ServiceCallError };

type BatchAnswer = { results: Array<{ ok: true; data: unknown } | { ok: false; status: number; error: { code: string; message: string } }> };

function outcomeOf<T>(result: BatchAnswer['results'][number]): BatchOutcome<T> {
  return result.ok ? { ok: true, value: result.data as T } : { ok: false, error: callError(result.status, result) };
}

/**
 * The settlement service, for an agent: its own account and payments, authenticated by the DID handshake
 * (`X-Ledger-Agent`); `transportToken` is the optional LEDGER_TOKEN fleet gate.
 *
 * @example const ledger = new SettlementClient({ baseUrl: 'http://127.0.0.1:9097', key }); await ledger.pay({ to, amount: '1.5' })
 */
export class SettlementClient {
  readonly session: ServiceSession;

  constructor(options: { baseUrl: string; transportToken?: string; key: AgentKey; fetch?: typeof fetch; transport?: SessionTransport }) {
    this.session = new ServiceSession({ ...options, service: 'settlement', principalHeader: 'X-Ledger-Agent' });
  }
  balance(): Promise<AccountView> {
    return this.session.request('GET', '/v1/balance');
  }
  /** The account's open holds, as payer or payee, newest first (`before`: the last page's `next_before`). */
  openHolds(page: { limit?: number; before?: number } = {}): Promise<{ holds: HoldView[]; next_before: number | null }> {
    const query = new URLSearchParams(Object.entries(page).map(([name, value]): [string, string] => [name, String(value)]));
    return this.session.request('GET', `/v1/holds${query.size > 0 ? `?${query}` : ''}`);
  }
  pay(request: PayRequest): Promise<{ seq: number; receipt: Record<string, unknown> }> {
    return this.session.request('POST', '/v1/pay', request);
  }
  /**
   * Escrow for `to`, authorised by the payer's signed intent alone (`intent`, the wire form): no principal token is
   * sent, so the caller may be the payee placing the payer's hold.
   */
  placeHold(request: HoldRequest): Promise<{ hold: HoldView; seq: number }> {
    return this.session.requestWithoutPrincipal('POST', '/v1/hold', request);
  }
  /**
   * Up to 64 holds in one request (`POST /v1/hold/batch`), each authorised by its payer's intent alone as in
   * `placeHold`; each item answers on its own, in order: a refused one does not fail the others.
   */
  async placeHolds(items: HoldRequest[]): Promise<Array<BatchOutcome<{ hold: HoldView; seq: number }>>> {
    const answer = await this.session.requestWithoutPrincipal<BatchAnswer>('POST', '/v1/hold/batch', { items });
    return answer.results.map(outcomeOf<{ hold: HoldView; seq: number }>);
  }
  /** Up to 64 captures and releases in one request (`POST /v1/hold/batch/settle`) as this agent; each answers on its own. */
  async settleHolds(items: SettleItem[]): Promise<Array<BatchOutcome<{ hold: HoldView; seq?: number; seqs?: number[] }>>> {
    const answer = await this.session.request<BatchAnswer>('POST', '/v1/hold/batch/settle', { items });
    return answer.results.map(outcomeOf<{ hold: HoldView; seq?: number; seqs?: number[] }>);
  }
  /** As the beneficiary: takes `amount` of the hold (default all); the rest returns to the payer at once. */
  capture(holdId: string, request: { amount?: string; idempotency_key?: string }): Promise<{ hold: HoldView; seqs: number[] }> {
    return this.session.request('POST', `/v1/hold/${holdId}/capture`, request);
  }
  /** Returns the whole hold to the payer. */
  release(holdId: string, request: { idempotency_key?: string } = {}): Promise<{ hold: HoldView; seq: number }> {
    return this.session.request('POST', `/v1/hold/${holdId}/release`, request);
  }
  hold(holdId: string): Promise<HoldView> {
    return this.session.requestWithoutPrincipal('GET', `/v1/hold/${holdId}`);
  }
  /** SETTLEMENT_DEV only: credits the caller, recorded as a deposit. */
  faucet(amount: string): Promise<Record<string, unknown>> {
    return this.session.request('POST', '/v1/dev/faucet', { amount });
  }
  /** Where and how to deposit on chain for this DID; asking registers the DID's claim, so the watcher can credit it. */
  depositInstructions(): Promise<DepositInstructions> {
    return this.session.request('GET', '/v1/deposit');
  }
  /** Binds the payout address withdrawals go to: `signature` is its EIP-191 signature over kit `payoutBindingMessage`. */
  bindPayoutAddress(address: string, signature: string): Promise<Record<string, unknown>> {
    return this.session.request('POST', '/v1/account/evm', { address, signature });
  }
  /** Burns `amount` now; the vault pays it to the bound payout address once the batch that burned it is anchored. */
  withdraw(request: { amount: string; swap_out?: string; idempotency_key?: string }): Promise<{ withdrawal: WithdrawalView; seq: number }> {
    return this.session.request('POST', '/v1/withdraw', request);
  }
  /** Closes the open window into a batch now (its receipts then have a checkpoint and inclusion proofs). */
  settle(): Promise<{ closed: boolean; batch: Record<string, unknown> | null }> {
    return this.session.request('POST', '/v1/settle');
  }
}
