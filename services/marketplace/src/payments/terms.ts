import type { PaymentTerms } from '@platform/client/marketplace-payments';
import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import { ServiceError } from '@platform/kit/errors';
import { parseAmount } from '@platform/kit/money';
import { decodeIntent, inspectIntent, type SettlementIntent } from '@platform/kit/settlement-intent';
import type { PaymentRefused } from './settlement-gateway.ts';

/**
 * What a 402 challenge asks for (the type callers sign against, `packages/client/src/marketplace-payments.ts`): a
 * settlement hold of `amount` for `pay_to`, carrying `ref`, signed by the caller as a kit settlement intent
 * (purpose `hold`) and sent back base64url-encoded in `X-Ledger-Payment`. The same terms are in the body's
 * `detail.terms` and, base64url JSON, in the `X-Payment-Required` header.
 */
export type { PaymentTerms };

export function paymentRequired(terms: PaymentTerms, message: string, reason?: string): ServiceError {
  return new ServiceError('payment_required', message, { details: { ...(reason ? { reason } : {}), terms } });
}

export function termsHeader(terms: PaymentTerms): string {
  return Buffer.from(JSON.stringify(terms), 'utf8').toString('base64url');
}

/**
 * Checks a payment against the terms before anything moves: a well-formed intent naming the caller's key, for a
 * hold of exactly the amount to the marketplace with exactly the ref, not expired and not outliving the terms. A
 * payment that does not fit is 402 with the terms again and the reason. The signature is settlement's to check,
 * when the hold is placed (it consumes the nonce then): nothing reaches a provider or a tab before that hold
 * exists, and checking it here too was a fifth of the marketplace's CPU per paid call. A forged intent is then
 * settlement's refusal, answered as `payment_invalid` (`refusedHold`).
 */
export function checkPayment(wire: string, terms: PaymentTerms, caller: string, now: Date): { intent: SettlementIntent; wire: string; publicKeyHex: string } {
  const refuse = (reason: string, message: string) => paymentRequired(terms, `the payment does not fit the terms: ${message}`, reason);
  const decoded = decodeIntent(wire);
  if (!decoded.ok) throw refuse('payment_malformed', decoded.reason);
  const verified = inspectIntent(decoded.signed, { now, expectedPurpose: 'hold' });
  if (!verified.ok) throw refuse('payment_invalid', verified.reason);
  const intent = verified.intent;
  const callerDid = parseDid(caller);
  if (!callerDid || canonicalDid(verified.payer) !== canonicalDid(callerDid)) throw refuse('payment_not_callers', 'the intent is not signed by the caller');
  if (canonicalDid(verified.payee) !== terms.pay_to) throw refuse('payment_wrong_payee', `the intent must pay ${terms.pay_to}`);
  const amount = parseAmount(terms.amount);
  if (!amount.ok || verified.micros !== amount.micros) throw refuse('payment_wrong_amount', `the intent must hold exactly ${terms.amount}`);
  if (intent.ref !== terms.ref) throw refuse('payment_wrong_ref', 'the intent’s ref does not bind this call');
  if (verified.expiresAt.getTime() > Date.parse(terms.expires_at)) throw refuse('payment_outlives_terms', `the intent must expire by ${terms.expires_at}`);
  return { intent, wire, publicKeyHex: decoded.signed.public_key };
}

/** Settlement's refusal of a hold as the caller's 402: a forged or malformed intent is `payment_invalid`, as if refused here. */
export function refusedHold(terms: PaymentTerms, error: PaymentRefused): ServiceError {
  const reason = error.reason === 'intent_invalid' ? 'payment_invalid' : (error.reason ?? `settlement_${error.code}`);
  return paymentRequired(terms, `settlement refused the hold: ${error.message}`, reason);
}
