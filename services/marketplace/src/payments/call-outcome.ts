import { ServiceError } from '@platform/kit/errors';
import type { InvocationTable, ListingTable } from '../db/schema.ts';
import { responseDigest } from './binding.ts';
import { callerInvocationView, type InvocationView } from './invocation-view.ts';
import { money } from './pricing.ts';
import type { ProviderOutcome } from './provider-call.ts';

/*
 * A call as both rails see it (invoke-desk.ts pays with a hold, tab-desk.ts with a voucher): what is asked, how
 * it is paid, and what it came to.
 */

/** How a call is paid: a signed hold intent (`X-Ledger-Payment`, or `payment.intent`), or a voucher on a tab. */
export type CallPayment =
  | { rail: 'hold'; wire: string }
  | { rail: 'voucher'; tabId: string; voucher: { sequence: string; cumulative: string; signature: string } }
  | undefined;

export interface CallRequest {
  /** The active listing called (from `listing(id)`). */
  listing: ListingTable;
  caller: string;
  operation: unknown;
  args: unknown;
  quoteId: string | undefined;
  idempotencyKey: string | undefined;
  payment: CallPayment;
}

/** A finished call as the caller sees it: 200 with the result, or the error it ended with (a replay gets the same). */
export type CallOutcome = { ok: true; body: InvocationView & { result: unknown } } | { ok: false; error: ServiceError };

/**
 * A call's row once its provider answered (both rails): the outcome columns and, when it succeeded, the answer the
 * caller gets and a replay returns (`extras` join it: the voucher rail's tab).
 */
export function finishedInvocation(
  invocation: InvocationTable,
  served: ProviderOutcome,
  cost: bigint,
  finishedAt: Date,
  extras: Record<string, unknown> = {},
): InvocationTable {
  const finished: InvocationTable = {
    ...invocation,
    status: served.ok ? 'succeeded' : 'failed',
    cost_micros: cost,
    units: served.ok ? served.units : 0n,
    latency_ms: Math.round(served.latencyMs),
    finished_at: finishedAt,
    response_digest: served.ok
      ? responseDigest({ result: served.result, units: served.units.toString() })
      : responseDigest({ error: served.reason, message: served.message }),
    error: served.ok ? null : { reason: served.reason, message: served.message },
  };
  if (served.ok) finished.response = { ...callerInvocationView(finished), result: served.result, ...extras };
  return finished;
}

/** The outcome a finished invocation answers a replay with. */
export function outcomeOf(row: InvocationTable): CallOutcome {
  if (row.status === 'succeeded') return { ok: true, body: row.response as InvocationView & { result: unknown } };
  const error = (row.error ?? {}) as { reason?: string; message?: string };
  return {
    ok: false,
    error: new ServiceError('unavailable', `the provider could not serve the call, and it costs nothing: ${error.message ?? 'failed'}`, {
      details: { reason: error.reason ?? 'provider_error', invocation_id: row.id, charged: money(0n) },
    }),
  };
}

/** The same idempotency key with another request: refused, naming the call it was used for. */
export function keyReused(invocationId: string): ServiceError {
  return new ServiceError('conflict', 'this Idempotency-Key was used for another call', {
    details: { reason: 'idempotency_key_reused', invocation_id: invocationId },
  });
}
