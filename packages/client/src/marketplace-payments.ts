import { invokeRef } from '@platform/kit/marketplace-binding';
import { type TabKind, voucherSigningText } from '@platform/kit/marketplace-voucher';
import { encodeIntent, newIntentNonce, signIntent } from '@platform/kit/settlement-intent';
import type { AgentKey } from './agent-key-type.ts';

/** What a marketplace 402 asks for: a settlement hold of `amount` for `pay_to`, bound to the call by `ref`. */
export interface PaymentTerms {
  /** `platform-settlement-hold-v1`. */
  scheme: string;
  pay_to: string;
  amount: string;
  purpose: 'hold';
  ref: string;
  /** The intent must expire no later than this (ISO 8601 UTC). */
  expires_at: string;
  settlement_url: string;
  /** What the payment is for (for display; `ref` is what binds them). */
  for: Record<string, unknown>;
}

/**
 * The caller's signed hold for a 402's terms, in its wire form (`X-Ledger-Payment`): a settlement intent of
 * purpose `hold` for exactly the amount, payee and ref asked, expiring when the terms do.
 */
export function signHoldForTerms(key: AgentKey, terms: PaymentTerms, nonce: string = newIntentNonce()): string {
  const signed = signIntent(
    { version: 1, from: key.did, to: terms.pay_to, amount: terms.amount, ref: terms.ref, nonce, expiry: terms.expires_at, purpose: 'hold' },
    key,
  );
  return encodeIntent(signed);
}

/**
 * The terms of another call of the same service, operation and quote, from terms a 402 gave earlier: the same
 * payee and cap, the ref bound to this call's arguments (`invokeRef`, as the marketplace computes it), expiring at
 * `expiresAt`. What lets a client pay in one request; the marketplace still checks every field and answers 402
 * with its own terms when they no longer fit (a price changed).
 */
export function termsForCall(
  known: PaymentTerms,
  call: { serviceId: string; operation: string; args: unknown; quoteId: string | null; caller: string },
  expiresAt: Date,
): PaymentTerms {
  return { ...known, ref: invokeRef(call), expires_at: expiresAt.toISOString() };
}

/** A voucher for a channel or stream session: the caller allows `cumulative` in total as of `sequence`. */
export function signVoucher(key: AgentKey, tab: { kind: TabKind; id: string; service_id: string }, sequence: number | bigint, cumulative: string) {
  const terms = { kind: tab.kind, id: tab.id, service_id: tab.service_id, sequence: String(sequence), cumulative };
  return { sequence: terms.sequence, cumulative, signature: key.sign(voucherSigningText(terms)) };
}
