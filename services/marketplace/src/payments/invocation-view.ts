import type { InvocationTable } from '../db/schema.ts';
import { money } from './pricing.ts';

/** An invocation as its caller sees it (`GET /v1/invocations/{id}` and the invoke answer, without the result). */
export interface InvocationView {
  invocation_id: string;
  service_id: string;
  operation: string;
  status: InvocationTable['status'];
  rail: InvocationTable['rail'];
  /** What it cost, and the most it could have cost. */
  cost: string;
  cap: string;
  units: string;
  quote_id: string | null;
  hold_id: string | null;
  channel_id: string | null;
  voucher_sequence: string | null;
  /** The settlement receipt that moved the money (the capture, or the release of a call that cost nothing). */
  settlement_seq: string | null;
  request_digest: string;
  response_digest: string | null;
  latency_ms: number | null;
  started_at: string;
  finished_at: string | null;
  receipt_url: string;
}

export function callerInvocationView(row: InvocationTable): InvocationView {
  return {
    invocation_id: row.id,
    service_id: row.listing_id,
    operation: row.operation,
    status: row.status,
    rail: row.rail,
    cost: money(row.cost_micros),
    cap: money(row.cap_micros),
    units: row.units.toString(),
    quote_id: row.quote_id,
    hold_id: row.hold_id,
    channel_id: row.channel_id,
    voucher_sequence: row.tab_sequence === null ? null : row.tab_sequence.toString(),
    settlement_seq: row.capture_seq === null ? null : row.capture_seq.toString(),
    request_digest: row.request_digest,
    response_digest: row.response_digest,
    latency_ms: row.latency_ms,
    started_at: row.started_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
    receipt_url: `/v1/receipts/${row.id}`,
  };
}
