import { ServiceError } from '@platform/kit/errors';
import { isUuid } from '@platform/kit/ids';
import type { Kysely } from 'kysely';
import type { Hex, PrivateKeyAccount } from 'viem';
import type { InvocationTable, MarketplaceSchema } from '../db/schema.ts';
import { type marketplaceDomain, type ReceiptMessage, receiptTypes, signReceipt, uuidBytes32, zeroBytes32 } from './eip712.ts';
import type { InvocationsRepository } from './invocations.repository.ts';

/** A receipt as callers get it: the EIP-712 message (integers as decimal strings), its digest and signature. */
export interface ReceiptView {
  invocation_id: string;
  /** True once the money has moved at settlement (`settlement_seq` is final); a receipt read before is signed but provisional. */
  final: boolean;
  signer: string;
  domain: ReturnType<typeof marketplaceDomain>;
  primary_type: 'Receipt';
  types: typeof receiptTypes;
  message: Record<string, string>;
  digest: string;
  signature: string;
  /** Where the settlement side of the attestation is checked: settlement's own signed receipt of the movement. */
  attestation: { settlement_seq: string | null; settlement_receipt: string | null; payment_id: string | null };
}

/**
 * EIP-712 receipts, signed on first read (signing is not on the call's path) and kept once final: the invocation,
 * service, operation, caller, rail, status, request and response digests, units, amount in micros, the
 * settlement seq that moved the money, the hold or tab that paid, and the timing. Anyone can check one with viem
 * alone: `verifyTypedData({address: signer, domain, types, primaryType: 'Receipt', message, signature})`.
 */
export class Receipts {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #invocations: InvocationsRepository;
  readonly #signer: PrivateKeyAccount;
  readonly #chainId: number;
  readonly #settlementUrl: string;

  constructor(options: {
    db: Kysely<MarketplaceSchema>;
    invocations: InvocationsRepository;
    signer: PrivateKeyAccount;
    chainId: number;
    settlementUrl: string;
  }) {
    this.#db = options.db;
    this.#invocations = options.invocations;
    this.#signer = options.signer;
    this.#chainId = options.chainId;
    this.#settlementUrl = options.settlementUrl;
  }

  /** The caller's invocation, or 404 (another caller's invocation is not found, not forbidden: no probing). */
  async invocationOf(caller: string, id: string): Promise<InvocationTable> {
    const row = isUuid(id) ? await this.#invocations.get(id) : undefined;
    if (!row || row.caller_did !== caller) throw new ServiceError('not_found', 'invocation not found');
    return row;
  }

  async forCaller(caller: string, id: string): Promise<ReceiptView> {
    const row = await this.invocationOf(caller, id);
    if (row.status === 'pending')
      throw new ServiceError('conflict', 'the call is still being served; its receipt comes when it ends', {
        retryable: true,
        details: { reason: 'invocation_pending' },
      });
    if (row.receipt !== null) return row.receipt as ReceiptView;
    const settlementSeq = await this.#settlementSeq(row);
    const message: ReceiptMessage = {
      invocationId: uuidBytes32(row.id),
      serviceId: uuidBytes32(row.listing_id),
      operation: row.operation,
      caller: row.caller_did,
      rail: row.rail,
      status: row.status,
      requestDigest: row.request_digest as Hex,
      responseDigest: (row.response_digest ?? zeroBytes32) as Hex,
      units: row.units,
      amount: row.cost_micros,
      settlementSeq: settlementSeq ?? 0n,
      paymentId: row.channel_id ? uuidBytes32(row.channel_id) : row.hold_id ? uuidBytes32(row.hold_id) : zeroBytes32,
      startedAt: BigInt(row.started_at.getTime()),
      finishedAt: BigInt((row.finished_at ?? row.started_at).getTime()),
    };
    const signed = await signReceipt(this.#signer, this.#chainId, message);
    const final = settlementSeq !== undefined;
    const view: ReceiptView = {
      invocation_id: row.id,
      final,
      signer: this.#signer.address,
      domain: signed.domain,
      primary_type: 'Receipt',
      types: receiptTypes,
      message: Object.fromEntries(Object.entries(message).map(([name, value]) => [name, String(value)])),
      digest: signed.digest,
      signature: signed.signature,
      attestation: {
        settlement_seq: settlementSeq === undefined || settlementSeq === 0n ? null : settlementSeq.toString(),
        settlement_receipt: settlementSeq ? new URL(`/v1/receipt/${settlementSeq}`, this.#settlementUrl).toString() : null,
        payment_id: row.channel_id ?? row.hold_id,
      },
    };
    if (final) await this.#invocations.saveReceipt(row.id, view);
    return view;
  }

  /**
   * The settlement seq that moved this call's money: the hold's capture or release; for a tab, its closing
   * capture. 0n when nothing was ever held (a free call, or one refused before a hold); undefined while the money
   * has not moved yet (a tab still open, a hold the sweep has yet to settle).
   */
  async #settlementSeq(row: InvocationTable): Promise<bigint | undefined> {
    if (row.rail === 'hold') return row.hold_id === null ? 0n : (row.capture_seq ?? undefined);
    if (row.channel_id === null) return undefined;
    const tab = await this.#db.selectFrom('tabs').select(['status', 'capture_seq']).where('id', '=', row.channel_id).executeTakeFirst();
    return tab?.status === 'closed' && tab.capture_seq !== null ? tab.capture_seq : undefined;
  }
}
