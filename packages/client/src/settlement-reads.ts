import { tracedFetch } from '@platform/kit/observability/tracing';
import type { ReceiptEvidence } from '@platform/kit/receipt-log/receipt-evidence';
import { readEnvelope } from './service-session.ts';
import type { WithdrawalView } from './settlement-client.ts';

export interface SettlementInfo {
  chain_id: number;
  sequencer_public_key: string;
  checkpoint_origin: string;
  checkpoint_verifier_key: string;
  [field: string]: unknown;
}

/** `GET /v1/receipt/{seq}`: the signed receipt and, once a batch covers it, that batch and the inclusion proof. */
export interface ReceiptRecord {
  receipt: Record<string, unknown>;
  leaf_index: number;
  batch: { id: string; number: number; log_size: number; log_root: string; checkpoint: string; [field: string]: unknown } | null;
  inclusion_proof: string[] | null;
  [field: string]: unknown;
}

/**
 * Settlement's public reads, which need no agent key or token (the explorer group): a third party checking a
 * receipt uses only these. No Node module: the console uses it in the browser, through the router's `/ledger` prefix.
 *
 * @example const evidence = await new SettlementReads({ baseUrl }).receiptEvidence(42)
 */
export class SettlementReads {
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;

  constructor(options: { baseUrl: string; fetch?: typeof fetch }) {
    this.#baseUrl = options.baseUrl;
    this.#fetch = options.fetch ?? tracedFetch;
  }

  info(): Promise<SettlementInfo> {
    return this.#get('/v1/info');
  }
  receipt(seq: number): Promise<ReceiptRecord> {
    return this.#get(`/v1/receipt/${seq}`);
  }
  /** The latest signed checkpoint. */
  checkpoint(): Promise<{ batch_id: string; log_size: number; log_root: string; checkpoint: string }> {
    return this.#get('/v1/checkpoint');
  }
  /** A withdrawal, the batch that burned it, whether that batch is anchored, and the vault payout's arguments. */
  withdrawal(id: string): Promise<{ withdrawal: WithdrawalView; batch_number: number | null; anchored: boolean; payout: Record<string, unknown> | null }> {
    return this.#get(`/v1/withdrawal/${encodeURIComponent(id)}`);
  }
  /** RFC 9162 consistency proof (hex) between two checkpointed log sizes (`to`: the latest). */
  consistency(from: number, to?: number): Promise<{ from: number; to: number; proof: string[] }> {
    return this.#get(`/v1/log/consistency?from=${from}${to === undefined ? '' : `&to=${to}`}`);
  }

  /**
   * What kit `verifyReceiptEvidence` checks for receipt `seq`: the receipt, its batch's checkpoint and inclusion
   * proof and, when a later batch has closed, the latest checkpoint with the consistency proof to it.
   */
  async receiptEvidence(seq: number): Promise<{ evidence: ReceiptEvidence; record: ReceiptRecord }> {
    const record = await this.receipt(seq);
    const evidence: ReceiptEvidence = {
      seq,
      receipt: record.receipt,
      checkpoint: record.batch?.checkpoint ?? null,
      inclusionProof: record.inclusion_proof,
    };
    if (!record.batch) return { evidence, record };
    const latest = await this.checkpoint();
    if (latest.log_size === record.batch.log_size) return { evidence, record };
    const { proof } = await this.consistency(record.batch.log_size, latest.log_size);
    return { evidence: { ...evidence, latest: { checkpoint: latest.checkpoint, consistencyProof: proof } }, record };
  }

  async #get<T>(path: string): Promise<T> {
    // Joined, not resolved: a base with a path (the router's `/ledger` prefix for the console) keeps it.
    return readEnvelope<T>(await this.#fetch(`${this.#baseUrl.replace(/\/+$/, '')}${path}`));
  }
}
