import { digestOf } from '@platform/kit/marketplace-binding';
import type { Hex } from 'viem';

/*
 * SHA-256, not keccak256: nothing on chain recomputes these digests, and SHA-256 is native here (keccak in JavaScript
 * was 4 % of a voucher call). The call's binding (`invokeRef`) is in the kit: callers compute it too.
 */
export { digestOf, invokeRef } from '@platform/kit/marketplace-binding';

/** What a call asked: the receipt's request digest. */
export function requestDigest(call: { serviceId: string; operation: string; args: unknown }): Hex {
  return digestOf({ service_id: call.serviceId, operation: call.operation, args: call.args });
}

/** What a call answered: the receipt's response digest (a failure's is of its error). */
export function responseDigest(answer: { result: unknown; units: string } | { error: string; message: string }): Hex {
  return digestOf(answer);
}

/** The `ref` of a tab's hold (a channel or a stream session), bound to its terms. */
export function tabRef(tab: { kind: string; serviceId: string; operation: string | null; caller: string; deposit: string; key: string }): Hex {
  return digestOf({ v: 'platform-marketplace-tab-v1', ...tab });
}
