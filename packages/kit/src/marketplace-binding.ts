import { hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';

/**
 * How a marketplace payment is bound to the one call it pays, shared by the marketplace (which checks it) and its
 * callers (which compute it to pay in one request instead of asking for a 402 first).
 */

/** `0x` + SHA-256 hex of a value's RFC 8785 canonical JSON: the digests receipts and payment refs are made of. */
export function digestOf(value: unknown): `0x${string}` {
  return `0x${hash('sha256', canonicalJson(value), 'hex')}`;
}

/**
 * The `ref` a hold must carry to pay one call: it binds the service, the operation, the arguments, the quote (or
 * none) and the caller, so a payment signed for one call cannot pay another. It travels in the caller's signed
 * intent, and settlement writes it on the hold's receipt.
 *
 * @example const ref = invokeRef({ serviceId, operation: 'echo', args: { text: 'hi' }, quoteId: null, caller: key.did })
 */
export function invokeRef(call: { serviceId: string; operation: string; args: unknown; quoteId: string | null; caller: string }): `0x${string}` {
  return digestOf({
    v: 'platform-marketplace-invoke-v1',
    service_id: call.serviceId,
    operation: call.operation,
    args_digest: digestOf(call.args),
    quote_id: call.quoteId,
    caller: call.caller,
  });
}
