import { createHash } from 'node:crypto';
import { canonicalJson } from '@platform/kit/canonical-json';
import type { Hex } from 'viem';

/**
 * SHA-256 of a value's RFC 8785 canonical JSON, 0x hex: the digests receipts and payment refs are made of. Not
 * keccak256: nothing on chain recomputes them, and SHA-256 is native here (keccak in JavaScript was 4 % of a
 * voucher call).
 */
export function digestOf(value: unknown): Hex {
  return `0x${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

/** What a call asked: the receipt's request digest. */
export function requestDigest(call: { serviceId: string; operation: string; args: unknown }): Hex {
  return digestOf({ service_id: call.serviceId, operation: call.operation, args: call.args });
}

/** What a call answered: the receipt's response digest (a failure's is of its error). */
export function responseDigest(answer: { result: unknown; units: string } | { error: string; message: string }): Hex {
  return digestOf(answer);
}

/**
 * The `ref` a hold must carry to pay one call: it binds the service, the operation, the arguments, the quote (or
 * none) and the caller, so a payment signed for one call cannot pay another. It travels in the caller's signed
 * intent, and settlement writes it on the hold's receipt.
 */
export function invokeRef(call: { serviceId: string; operation: string; args: unknown; quoteId: string | null; caller: string }): Hex {
  return digestOf({
    v: 'platform-marketplace-invoke-v1',
    service_id: call.serviceId,
    operation: call.operation,
    args_digest: digestOf(call.args),
    quote_id: call.quoteId,
    caller: call.caller,
  });
}

/** The `ref` of a tab's hold (a channel or a stream session), bound to its terms. */
export function tabRef(tab: { kind: string; serviceId: string; operation: string | null; caller: string; deposit: string; key: string }): Hex {
  return digestOf({ v: 'platform-marketplace-tab-v1', ...tab });
}
