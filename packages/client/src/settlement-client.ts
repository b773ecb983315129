import type { AgentKey } from './agent-key.ts';
import { ServiceSession } from './service-session.ts';

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

/**
 * The settlement service, for an agent: its own account and payments, authenticated by the DID handshake
 * (`X-Ledger-Agent`); `transportToken` is the optional LEDGER_TOKEN fleet gate.
 *
 * @example const ledger = new SettlementClient({ baseUrl: 'http://127.0.0.1:9097', key }); await ledger.pay({ to, amount: '1.5' })
 */
export class SettlementClient {
  readonly session: ServiceSession;

  constructor(options: { baseUrl: string; transportToken?: string; key: AgentKey; fetch?: typeof fetch }) {
    this.session = new ServiceSession({ ...options, service: 'settlement', principalHeader: 'X-Ledger-Agent' });
  }
  balance(): Promise<AccountView> {
    return this.session.request('GET', '/v1/balance');
  }
  pay(request: PayRequest): Promise<{ seq: number; receipt: Record<string, unknown> }> {
    return this.session.request('POST', '/v1/pay', request);
  }
  /** SETTLEMENT_DEV only: credits the caller, recorded as a deposit. */
  faucet(amount: string): Promise<Record<string, unknown>> {
    return this.session.request('POST', '/v1/dev/faucet', { amount });
  }
}
