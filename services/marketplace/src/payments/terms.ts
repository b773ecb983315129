import type { PaymentTerms } from '@platform/client/marketplace-payments';
import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import { ServiceError } from '@platform/kit/errors';
import { parseAmount } from '@platform/kit/money';
import { decodeIntent, type SettlementIntent, verifyIntent } from '@platform/kit/settlement-intent';

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
 * Checks a payment against the terms before anything moves: a well-formed intent, signed by the caller's key,
 * for a hold of exactly the amount to the marketplace with exactly the ref, not expired and not outliving the
 * terms. Settlement checks the signature again and consumes the nonce when the hold is placed. A payment that
 * does not fit is 402 with the terms again and the reason.
 */
export function checkPayment(wire: string, terms: PaymentTerms, caller: string, now: Date): { intent: SettlementIntent; wire: string; publicKeyHex: string } {
  const refuse = (reason: string, message: string) => paymentRequired(terms, `the payment does not fit the terms: ${message}`, reason);
  const decoded = decodeIntent(wire);
  if (!decoded.ok) throw refuse('payment_malformed', decoded.reason);
  const verified = verifyIntent(decoded.signed, { now, expectedPurpose: 'hold' });
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
